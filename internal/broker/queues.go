package broker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/services"
)

// Sources a QueueStat names, so the learner knows where a figure came from.
const (
	SourcePassive    = "passive declare; unacked: the lab's own channels"
	SourceManagement = "passive declare; unacked: management API"
)

// held counts deliveries the lab's own channels hold unacknowledged, per
// queue (namespaced name). Without the management API this is the only
// unacked figure the lab has: a passive declare reports ready messages and
// consumers, never unacknowledged ones.
var held = struct {
	sync.Mutex
	m map[string]int
}{m: map[string]int{}}

// Hold records n more (or, negative, fewer) deliveries of queue held
// unacknowledged by the lab's channels.
func Hold(queue string, n int) {
	held.Lock()
	defer held.Unlock()
	held.m[queue] += n
	if held.m[queue] <= 0 {
		delete(held.m, queue)
	}
}

// Held is how many deliveries of queue the lab's channels hold unacked.
func Held(queue string) int {
	held.Lock()
	defer held.Unlock()
	return held.m[queue]
}

// types remembers the type of each queue the lab declared: a passive
// declare's count for a stream is approximate (from offsets) and lags the
// log, so its length is read from the log.
var types sync.Map // namespaced name → "classic" | "quorum" | "stream"

func noteType(name, typ string) {
	types.Store(name, typ)
	lastSeen.Delete(name) // declared anew: what it held before is no count of it
}

// lastSeen keeps each queue's message count at the lab's last read that the
// broker answered: what a queue no running node serves held when it could
// still be read (lesson 19's classic queue, its node down).
var lastSeen sync.Map // namespaced name → int

// LastSeen is queue name's count at the lab's last answered read.
func LastSeen(name string) (int, bool) {
	v, ok := lastSeen.Load(name)
	n, _ := v.(int)
	return n, ok
}

// TypeOf is the type the lab declared queue name with, "" if unknown.
func TypeOf(name string) string {
	v, _ := types.Load(name)
	s, _ := v.(string)
	return s
}

// Reader reads queue state at the broker at the moment it is asked.
type Reader struct {
	Client *Client
	Names  services.Names
	Mgmt   *Management // nil when the management API did not answer
	// Others are the cluster's other nodes, for reading a stream where
	// the node Client talks to has no running replica of it.
	Others []*Client
	// Limit replaces AnswerLimit (replay's short waits); 0 is AnswerLimit.
	Limit time.Duration
}

func (r *Reader) limit() time.Duration {
	if r.Limit > 0 {
		return r.Limit
	}
	return AnswerLimit
}

// NewReader reads through svc's broker; it asks the management API for
// unacked counts only when `lab doctor`'s probe found it answering.
func NewReader(svc *services.Services) *Reader {
	r := &Reader{Client: NewClient(svc.Config.AMQP), Names: svc.Names}
	if svc.Info.Management {
		r.Mgmt, _ = ManagementFor(svc.Config.AMQP, svc.Config.Management)
	}
	return r
}

// Close drops the reader's connections.
func (r *Reader) Close() {
	r.Client.Close()
	for _, o := range r.Others {
		o.Close()
	}
}

// For reads the queues of another namespace over the same connection.
func (r *Reader) For(names services.Names) *Reader {
	c := *r
	c.Names = names
	return &c
}

// QueueReader is what steps.Env.Queues wants: the state of each queue,
// named as the article names it (the namespace is added here).
func QueueReader(svc *services.Services) func(ctx context.Context, names []string) ([]lab.QueueStat, error) {
	r := NewReader(svc)
	return r.Read
}

// Read returns the state of each article-named queue, in order.
func (r *Reader) Read(ctx context.Context, names []string) ([]lab.QueueStat, error) {
	out := make([]lab.QueueStat, 0, len(names))
	for _, n := range names {
		st, err := r.Stat(ctx, r.Names.Name(n))
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	return out, nil
}

// AnswerLimit bounds how long Stat waits for the broker to answer for a
// queue: a healthy broker answers in milliseconds.
const AnswerLimit = 5 * time.Second

// Stat reads one queue by its real (namespaced) name. Ready and consumers
// come from a passive declare, exact at this moment; a stream's length from
// reading its log; unacked from the management API when it answers, else
// from the deliveries the lab's own channels hold.
func (r *Reader) Stat(ctx context.Context, name string) (lab.QueueStat, error) {
	st := lab.QueueStat{Name: name, Source: SourcePassive}
	declare := func() (amqp.Queue, error) {
		pctx, cancel := context.WithTimeout(ctx, r.limit())
		defer cancel()
		var q amqp.Queue // written beside: read only once Probe has its answer
		err := r.Client.Probe(pctx, func(ch *amqp.Channel) error {
			var err error
			q, err = ch.QueueDeclarePassive(name, false, false, false, false, nil)
			return err
		})
		return q, err
	}
	var q amqp.Queue
	var err error
	if TypeOf(name) == Quorum {
		q, err = quorumDeclare(ctx, declare, quorumRereads, quorumPause)
	} else {
		q, err = declare()
	}
	if err == nil {
		st.Exists, st.Ready, st.Consumers = true, q.Messages, q.Consumers
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		// RabbitMQ 4.x holds a passive declare on a classic queue whose
		// node is down for about a minute before it answers.
		st.Exists, st.Down = true, fmt.Sprintf("no answer within %s: the broker is waiting for the node that holds it", r.limit())
		return st, nil
	}
	if IsNotFound(err) {
		// A cluster answers 404 for a durable queue whose home node is down
		// too (3.x at once, 4.x after about a minute): the queue is there,
		// but no node can serve it.
		if e := err.(*amqp.Error); strings.Contains(e.Reason, "down or inaccessible") || strings.Contains(e.Reason, "due to timeout") {
			st.Exists, st.Down = true, strings.TrimPrefix(e.Reason, "NOT_FOUND - ")
		}
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read queue %s at the broker: %w", name, err)
	}
	if TypeOf(name) == "stream" {
		read := func(c *Client) (int, error) {
			o := *r
			o.Client = c
			sctx, cancel := context.WithTimeout(ctx, r.limit())
			defer cancel()
			n, err := o.StreamLength(sctx, name)
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				err = &amqp.Error{Reason: fmt.Sprintf("no answer within %s", r.limit())}
			}
			return n, err
		}
		n, err := read(r.Client)
		// A cluster node without a running replica of the stream refuses
		// to read it; a stream client reads from a node that has one.
		for _, other := range r.Others {
			if err == nil {
				break
			}
			n, err = read(other)
		}
		// The broker refused (or did not answer) the read: the stream is
		// there and not served now, as while its replicas recover after a
		// restart (4.3 closes the connection with 541 INTERNAL_ERROR then).
		if ae := (*amqp.Error)(nil); errors.As(err, &ae) {
			st.Down = strings.TrimPrefix(ae.Reason, "PRECONDITION_FAILED - ")
			if ae.Code != 0 && !strings.Contains(ae.Reason, " - ") {
				st.Down = fmt.Sprintf("%d %s", ae.Code, ae.Reason)
			}
			return st, nil
		}
		if err != nil {
			return st, err
		}
		st.Ready = n
	}
	st.Unacked = Held(name)
	if r.Mgmt != nil {
		if f, err := r.Mgmt.Queue(ctx, name); err == nil && f.Exists {
			st.Unacked, st.Source = f.Unacked, SourceManagement
		}
	}
	lastSeen.Store(name, st.Ready+st.Unacked)
	return st, nil
}

// A quorum queue's passive declare answers 0 messages, not an error, when
// its leader does not answer the count within 250 ms
// (rabbit_quorum_queue:stat/1 turns a timeout or an error into {ok, 0, 0}):
// a busy or electing cluster reads as empty. A 0 is read again a few times
// before it is believed; a queue that is empty costs about a second.
const (
	quorumRereads = 4
	quorumPause   = 250 * time.Millisecond
)

// quorumDeclare is declare, its zero count read again up to rereads times,
// pause apart: the first nonzero answer is the queue's; a reread that fails
// leaves the answer before it.
func quorumDeclare(ctx context.Context, declare func() (amqp.Queue, error), rereads int, pause time.Duration) (amqp.Queue, error) {
	q, err := declare()
	for i := 0; i < rereads && err == nil && q.Messages == 0; i++ {
		select {
		case <-ctx.Done():
			return q, nil
		case <-time.After(pause):
		}
		again, aerr := declare()
		if aerr != nil {
			return q, nil // the answer it gave stands
		}
		q = again
	}
	return q, err
}

// Holds counts the ready messages of queue name whose message id is id,
// by taking each one unacknowledged and handing all back when the channel
// closes (a classic queue puts them back where they were; they come back
// marked redelivered). Messages a consumer holds are not seen. At most max
// messages are looked at.
func (r *Reader) Holds(ctx context.Context, name, id string, max int) (int, error) {
	pctx, cancel := context.WithTimeout(ctx, r.limit())
	defer cancel()
	n := 0
	err := r.Client.Probe(pctx, func(ch *amqp.Channel) error {
		for range max {
			d, ok, err := ch.Get(name, false)
			if err != nil || !ok {
				return err
			}
			if d.MessageId == id {
				n++
			}
		}
		return fmt.Errorf("queue %s holds more than %d messages: counted %d with id %s among the first %d", name, max, n, id, max)
	})
	if err != nil {
		return 0, fmt.Errorf("look for message %s in queue %s: %w", id, name, err)
	}
	return n, nil
}

// StreamLength counts the messages in a stream by reading it from the first
// offset: a stream is a log, and the count a passive declare gives for it
// is approximate and lags (0 right after two confirmed publishes on 3.10.8,
// 2 seconds later; it has differed between cluster nodes). The read stops
// once the log has been idle for a moment.
func (r *Reader) StreamLength(ctx context.Context, name string) (int, error) {
	n := 0
	err := r.Client.Probe(ctx, func(ch *amqp.Channel) error {
		// Streams need a prefetch and manual acks to deliver at all.
		if err := ch.Qos(1000, 0, false); err != nil {
			return err
		}
		ds, err := ch.Consume(name, "", false, false, false, false, amqp.Table{"x-stream-offset": "first"})
		if err != nil {
			return err
		}
		first := time.NewTimer(1500 * time.Millisecond)
		defer first.Stop()
		idle := first.C
		var last uint64
		for {
			select {
			case d, ok := <-ds:
				if !ok {
					return fmt.Errorf("the channel closed while reading stream %s", name)
				}
				n++
				last = d.DeliveryTag
				first.Reset(250 * time.Millisecond)
			case <-idle:
				if last > 0 {
					_ = ch.Ack(last, true)
				}
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	if err != nil {
		return 0, fmt.Errorf("read stream %s from its first offset: %w", name, err)
	}
	return n, nil
}

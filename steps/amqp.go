package steps

// The broker part's vocabulary: AMQP connections and named channels per run,
// the fault proxy, and what the lab's channels saw (confirms, returns,
// deliveries, channel errors). The kinds are in amqp_*.go, the expect verbs
// and ledger sources in amqp_expect.go.

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
)

// proxyVar is ${proxy}: where the fault proxy listens.
const proxyVar = "proxy"

// Connections a channel can run on: straight to the broker, or through the
// run's fault proxy.
const (
	viaDirect = "direct"
	viaProxy  = "proxy"
)

// amqpState is one run's AMQP world. It is created on first use and closed
// with the run (Run.onClose), so a reset starts from no connections.
type amqpState struct {
	r *Run

	mu     sync.Mutex
	conns  map[string]*amqp.Connection
	chans  map[string]*amqpChan
	proxy  *amqpproxy.Proxy
	shown  int // proxy events already shown by a proxy show step
	reader *broker.Reader
	seen   seenCounts
}

// seenCounts is what the lab's own channels observed during the run.
type seenCounts struct {
	Acked, Nacked, Timeouts, Unknown, Returned, Delivered, Redelivered int
}

// amqpChan is one named channel of a lesson.
type amqpChan struct {
	name, via string
	ch        *amqp.Channel
	confirm   bool
	prefetch  int
	returns   chan amqp.Return
	done      chan struct{} // closed when the channel has ended
	closeErr  *amqp.Error   // why it ended (nil: closed by the lab)
	closedAt  time.Time
	consuming map[string]string // queue → consumer tag
	inbox     []amqp.Delivery   // delivered by basic.consume, not yet shown
	arrived   chan struct{}     // closed and replaced on every delivery
	held      map[uint64]string // tag → queue, delivered and not yet settled
	lastTag   uint64
}

func amqpOf(r *Run) *amqpState {
	r.mu.Lock()
	st := r.st.amqp
	created := st == nil
	if created {
		st = &amqpState{r: r, conns: map[string]*amqp.Connection{}, chans: map[string]*amqpChan{},
			reader: broker.NewReader(r.Env.Svc)}
		r.st.amqp = st
	}
	r.mu.Unlock()
	if created {
		r.onClose(st.close)
	}
	return st
}

// close ends every channel and connection the run opened, and the proxy.
// Unacked deliveries go back to their queues, as when a process exits.
func (st *amqpState) close() {
	st.mu.Lock()
	conns, chans, p := st.conns, st.chans, st.proxy
	st.conns, st.chans, st.proxy = map[string]*amqp.Connection{}, map[string]*amqpChan{}, nil
	st.mu.Unlock()
	for _, c := range chans {
		c.release(st)
	}
	for _, c := range conns {
		c.Close()
	}
	if p != nil {
		p.Close()
	}
	st.reader.Close()
}

// release forgets the channel's unsettled deliveries: the broker requeues
// them when the channel ends.
func (c *amqpChan) release(st *amqpState) int {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := len(c.held)
	for _, q := range c.held {
		broker.Hold(q, -1)
	}
	c.held = map[uint64]string{}
	c.inbox = nil
	return n
}

// conn returns the run's connection via direct or proxy, dialling it.
func (st *amqpState) conn(ctx context.Context, via string) (*amqp.Connection, error) {
	st.mu.Lock()
	c := st.conns[via]
	st.mu.Unlock()
	if c != nil && !c.IsClosed() {
		return c, nil
	}
	u := st.r.brokerURL()
	if via == viaProxy {
		p, err := st.proxyFor()
		if err != nil {
			return nil, err
		}
		if u, err = proxyURL(u, p); err != nil {
			return nil, err
		}
	}
	c, err := services.DialAMQP(ctx, u)
	if err != nil {
		return nil, &lab.Error{What: "cannot open an AMQP connection (" + via + ")", Where: secret.URL(u), Err: err,
			Fix: "check that RabbitMQ is running (`lab doctor`)"}
	}
	st.mu.Lock()
	st.conns[via] = c
	st.mu.Unlock()
	return c, nil
}

// proxyFor starts the run's fault proxy in front of the broker.
func (st *amqpState) proxyFor() (*amqpproxy.Proxy, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.proxy != nil {
		return st.proxy, nil
	}
	upstream, err := services.AMQPAddr(st.r.brokerURL())
	if err != nil {
		return nil, err
	}
	p, err := amqpproxy.New("", upstream)
	if err != nil {
		return nil, err
	}
	st.proxy = p
	st.r.setVar(proxyVar, p.Addr())
	return p, nil
}

func proxyURL(brokerURL string, p *amqpproxy.Proxy) (string, error) {
	u, err := url.Parse(brokerURL)
	if err != nil {
		return "", err
	}
	user, pass := "guest", "guest"
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	return p.URL(user, pass, strings.TrimPrefix(u.Path, "/")), nil
}

// channel returns the named channel, opening it on via when it is new or
// has been closed (by the lab, the broker, or a cut). notes, a step's first
// observations, say why an old one was replaced, for the learner.
func (st *amqpState) channel(ctx context.Context, name, via string) (c *amqpChan, notes []string, err error) {
	if via == "" {
		via = viaDirect
	}
	st.mu.Lock()
	old := st.chans[name]
	st.mu.Unlock()
	if old != nil {
		select {
		case <-old.done:
			notes = append(notes, sayReopened.F(name, old.why(), name))
		default:
			if old.via != via {
				return nil, nil, fmt.Errorf("channel %s runs on the %s connection, not %s; name another channel", name, old.via, via)
			}
			return old, nil, nil
		}
	}
	conn, err := st.conn(ctx, via)
	if err != nil {
		return nil, nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		// A connection that just died (broker restart): dial once more.
		conn.Close()
		if conn, err = st.conn(ctx, via); err != nil {
			return nil, nil, err
		}
		if ch, err = conn.Channel(); err != nil {
			return nil, nil, fmt.Errorf("open channel %s: %w", name, err)
		}
	}
	c = &amqpChan{name: name, via: via, ch: ch, done: make(chan struct{}), consuming: map[string]string{},
		arrived: make(chan struct{}), held: map[uint64]string{}}
	c.returns = ch.NotifyReturn(make(chan amqp.Return, 64))
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	go func() {
		err, _ := <-closes
		st.mu.Lock()
		c.closeErr, c.closedAt = err, time.Now()
		st.mu.Unlock()
		c.release(st)
		close(c.done)
	}()
	st.mu.Lock()
	st.chans[name] = c
	st.mu.Unlock()
	return c, notes, nil
}

// closed reports whether the channel has ended, waiting up to d for it.
func (c *amqpChan) closed(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
		return true
	case <-t.C:
		return false
	}
}

func (c *amqpChan) why() string {
	if c.closeErr == nil {
		return sayClosedByLabShort.F()
	}
	return amqpErrText(c.closeErr)
}

// closeOutcome is an ended channel as an outcome's error: the broker's code
// when the broker closed it (404, 406), "closed" when the connection under
// it was lost or the lab closed it.
func (c *amqpChan) closeOutcome() (code, text string) {
	switch e := c.closeErr; {
	case e == nil:
		return "closed", sayClosedByLab.F(c.name)
	case e.Server:
		return strconv.Itoa(e.Code), sayClosedByBroker.F(c.name, amqpErrText(e))
	default:
		return "closed", sayEndedWithConn.F(c.name, e.Reason)
	}
}

func amqpErrText(e *amqp.Error) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("%d %s", e.Code, e.Reason)
}

// roundTrip sends a synchronous no-op (basic.qos with the channel's own
// prefetch) and waits for its answer. The broker handles a channel's frames
// in order, so once qos-ok is back, every earlier frame (an ack, a publish)
// has been processed: a refused ack has closed the channel, a mandatory
// publish that found no queue has been returned.
func (c *amqpChan) roundTrip() error {
	return c.ch.Qos(c.prefetch, 0, false)
}

// drainReturns collects basic.returns already handed to the channel.
func (c *amqpChan) drainReturns() []amqp.Return {
	var out []amqp.Return
	for {
		select {
		case ret, ok := <-c.returns:
			if !ok {
				return out
			}
			out = append(out, ret)
		default:
			return out
		}
	}
}

// amqpName namespaces an exchange or queue name; the default exchange ("") and
// the broker's own amq.* exchanges keep theirs.
func (r *Run) amqpName(s string) string {
	if s == "" || strings.HasPrefix(s, "amq.") {
		return s
	}
	return r.Env.Svc.Names.Name(s)
}

// proxyEvents renders proxy wire-log entries, keeping the frames a lesson
// talks about.
func proxyEvents(evs []amqpproxy.Event) []string {
	var out []string
	for _, e := range evs {
		n := e.Name
		if !(strings.HasPrefix(n, "basic.") || strings.HasPrefix(n, "channel.close") || strings.HasPrefix(n, "confirm.") ||
			strings.HasPrefix(n, "connection.close") || n == "connection cut" || n == "end of stream" || n == "connection accepted") {
			continue
		}
		if strings.HasPrefix(n, "basic.qos") || strings.HasPrefix(n, "basic.consume") {
			continue
		}
		if e.Dropped {
			n += " [DROPPED]"
		}
		s := sayWire.F(e.Dir, e.Channel, n)
		if e.Note != "" {
			s = sayWireNote.F(e.Dir, e.Channel, n, e.Note)
		}
		out = append(out, s)
	}
	return out
}

// amqpReset deletes the exchanges and queues a lesson's reset lists
// (queues=a,b exchanges=x), namespaced, and only those the lab's mark says
// the lab created. Queues go first: deleting them drops their bindings.
func amqpReset(ctx context.Context, r *Run, s *lab.Step) ([]string, error) {
	qs, xs := SplitList(s.Attrs["queues"]), SplitList(s.Attrs["exchanges"])
	if len(qs)+len(xs) == 0 {
		return nil, nil
	}
	cl := broker.NewClient(r.brokerURL())
	defer cl.Close()
	var lines []string
	for _, set := range []struct {
		kind  string
		names []string
	}{{"queue", qs}, {"exchange", xs}} {
		for _, n := range set.names {
			note, err := cl.Remove(ctx, set.kind, r.amqpName(n))
			if err != nil {
				return lines, err
			}
			if note != "" {
				lines = append(lines, note)
			}
		}
	}
	if len(lines) == 0 {
		lines = append(lines, sayNoLabObjects.F())
	}
	return lines, nil
}

// queueStat reads an article-named queue at the broker now.
func (st *amqpState) queueStat(ctx context.Context, article string) (lab.QueueStat, error) {
	return st.reader.Stat(ctx, st.r.amqpName(article))
}

// boolAttr reads a flag attribute: present (or =true/yes) is true.
func boolAttr(s *lab.Step, key string) bool {
	v, ok := s.Attrs[key]
	if !ok {
		return false
	}
	return v == "" || v == "true" || v == "yes"
}

func checkBoolAttrs(s *lab.Step, keys ...string) error {
	for _, k := range keys {
		if v, ok := s.Attrs[k]; ok && v != "" && v != "true" && v != "false" && v != "yes" && v != "no" {
			return fmt.Errorf("%s: %s=%q: write %s alone, or %s=true/false", s.Where(), k, v, k, k)
		}
	}
	return nil
}

func sortedKeys(m map[uint64]string) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

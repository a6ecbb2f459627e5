package amqpproxy_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	. "github.com/rmlab/lab/internal/amqpproxy"
)

type wires struct {
	mu  sync.Mutex
	all []Wire
}

func (w *wires) add(x Wire) { w.mu.Lock(); w.all = append(w.all, x); w.mu.Unlock() }
func (w *wires) ops() []Wire {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.all)
}

// durableQueue is a queue that outlives its consumers' connections, as a
// redelivery needs.
func durableQueue(t *testing.T, direct *amqp.Connection) string {
	t.Helper()
	q := declareQueue(t, direct)
	err := withChannel(t, direct, func(ch *amqp.Channel) error {
		if _, err := ch.QueueDelete(q, false, false, false); err != nil {
			return err
		}
		_, err := ch.QueueDeclare(q, false, false, false, false, amqp.Table{"x-expires": int32(120_000)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func publishID(t *testing.T, ch *amqp.Channel, q, id string) *amqp.DeferredConfirmation {
	t.Helper()
	dc, err := ch.PublishWithDeferredConfirmWithContext(t.Context(), "", q, false, false, amqp.Publishing{
		MessageId: id, ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: []byte(`{}`),
		Headers: amqp.Table{"x-test": "a header table before the message id"}})
	if err != nil {
		t.Fatalf("publish %s: %v", id, err)
	}
	return dc
}

func TestAnAckCutBeforeTheBrokerGetsItIsRedeliveredAndTheWatcherSeesWhichMessageWentWhere(t *testing.T) {
	p := newProxy(t)
	var seen wires
	p.Watch(seen.add)
	direct := dialDirect(t)
	q := durableQueue(t, direct)
	_, pub := dialViaProxy(t, p)
	mustBeAcked(t, publishID(t, pub, q, "order-17-paid"), 5*time.Second)

	conn, err := amqp.Dial(via(t, p.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	ds, err := ch.Consume(q, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := <-ds
	cut := p.CutBefore(Match{Dir: ToBroker, Class: ClassBasic, Method: MethodBasicAck})
	d.Ack(false)
	select {
	case <-cut:
	case <-time.After(5 * time.Second):
		t.Fatal("CutBefore never fired on the ack")
	}
	// The broker never saw the ack: the message is back, redelivered.
	waitQueueDepth(t, direct, q, 1)
	c2, err := amqp.Dial(via(t, p.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	ch2, _ := c2.Channel()
	ds2, _ := ch2.Consume(q, "", true, false, false, false, nil)
	select {
	case d2 := <-ds2:
		if !d2.Redelivered || d2.MessageId != "order-17-paid" {
			t.Fatalf("second delivery: redelivered=%t id=%q", d2.Redelivered, d2.MessageId)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no redelivery after the cut ack")
	}
	time.Sleep(100 * time.Millisecond)
	var got []string
	for _, w := range seen.ops() {
		s := w.Op + " " + w.MessageID
		if w.Redelivered {
			s += " redelivered"
		}
		if w.Cut {
			s += " cut"
		}
		if w.NoAck {
			s += " no-ack"
		}
		got = append(got, s)
	}
	want := []string{"publish order-17-paid", "confirm ", "consume ", "deliver order-17-paid", "ack  cut", "consume  no-ack", "deliver order-17-paid redelivered"}
	if !slices.Equal(got, want) {
		t.Fatalf("watched %q\nwant    %q", got, want)
	}
}

func TestAPublishCutBeforeTheBrokerGetsItIsNotStoredAndTheWatcherNamesIt(t *testing.T) {
	p := newProxy(t)
	var seen wires
	p.Watch(seen.add)
	direct := dialDirect(t)
	q := durableQueue(t, direct)
	conn, ch := dialViaProxy(t, p)
	p.CutBefore(Match{Dir: ToBroker, Class: ClassBasic, Method: MethodBasicPublish})
	dc := publishID(t, ch, q, "order-4-paid")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if ok, err := dc.WaitContext(ctx); ok {
		t.Fatalf("a publish cut before the broker was confirmed (ok=%t err=%v)", ok, err)
	}
	select {
	case <-conn.NotifyClose(make(chan *amqp.Error, 1)):
	case <-time.After(5 * time.Second):
		t.Fatal("the connection stayed open after CutBefore")
	}
	waitQueueDepth(t, direct, q, 0)
	var cut []string
	for _, w := range seen.ops() {
		if w.Cut {
			cut = append(cut, w.Op+" "+w.MessageID)
		}
	}
	if !slices.Equal(cut, []string{"publish order-4-paid"}) {
		t.Fatalf("cut frames watched: %q", cut)
	}
}

func TestADisarmedCutBeforeNeverCutsALaterFrame(t *testing.T) {
	p := newProxy(t)
	direct := dialDirect(t)
	q := durableQueue(t, direct)
	_, ch := dialViaProxy(t, p)
	fired := p.CutBefore(Match{Dir: ToBroker, Class: ClassBasic, Method: MethodBasicPublish})
	p.Disarm(fired)
	mustBeAcked(t, publishID(t, ch, q, "order-1-paid"), 5*time.Second)
	select {
	case <-fired:
		t.Fatal("a disarmed CutBefore fired")
	default:
	}
	// A disarm of an older arming leaves the newer one armed.
	old := p.CutBefore(Match{Dir: ToBroker, Class: ClassBasic, Method: MethodBasicPublish})
	newer := p.CutBefore(Match{Dir: ToBroker, Class: ClassBasic, Method: MethodBasicPublish})
	p.Disarm(old)
	publishID(t, ch, q, "order-2-paid")
	select {
	case <-newer:
	case <-time.After(5 * time.Second):
		t.Fatal("disarming the older CutBefore took back the newer one")
	}
}

func TestAForbiddenPurgeNeverReachesTheBrokerClosesTheConnectionAndIsNamed(t *testing.T) {
	p := newProxy(t)
	var seen wires
	p.Watch(seen.add)
	p.Forbid(Match{Dir: ToBroker, Class: ClassQueue, Method: MethodQueuePurge})
	direct := dialDirect(t)
	q := durableQueue(t, direct)
	_, pub := dialViaProxy(t, p)
	mustBeAcked(t, publishID(t, pub, q, "order-1-paid"), 5*time.Second)

	conn, ch := dialViaProxy(t, p)
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	done := make(chan error, 1)
	go func() { _, err := ch.QueuePurge(q, false); done <- err }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection stayed open after a forbidden queue.purge")
	}
	<-done
	// The broker never got the purge: the message is still there.
	waitQueueDepth(t, direct, q, 1)
	var names []string
	for _, w := range seen.ops() {
		if w.Op == "forbidden" {
			names = append(names, w.Method)
		}
	}
	if !slices.Equal(names, []string{"queue.purge"}) {
		t.Fatalf("the watcher saw forbidden %q, want queue.purge once", names)
	}
}

func TestADroppedConfirmIsWatchedAsDroppedAndTheOthersOfAMultipleAckAsRead(t *testing.T) {
	p := newProxy(t)
	var seen wires
	p.Watch(seen.add)
	direct := dialDirect(t)
	q := durableQueue(t, direct)
	_, ch := dialViaProxy(t, p)
	p.DropNextConfirms(1)
	var dcs []*amqp.DeferredConfirmation
	for _, id := range []string{"order-1-paid", "order-2-paid", "order-3-paid"} {
		dcs = append(dcs, publishID(t, ch, q, id))
	}
	mustBeAcked(t, dcs[2], 5*time.Second)
	time.Sleep(100 * time.Millisecond)
	dropped, read := 0, 0
	for _, w := range seen.ops() {
		if w.Op != "confirm" {
			continue
		}
		if w.Multiple {
			t.Errorf("a confirm watched as multiple (tag %d): each seq is its own", w.Tag)
		}
		if w.Dropped {
			dropped++
		} else {
			read++
		}
	}
	if dropped != 1 || read != 2 {
		t.Fatalf("watched %d dropped and %d read confirms, want 1 and 2", dropped, read)
	}
}

func TestTheWatcherSeesTheBrokerRefuseALoginSomething(t *testing.T) {
	p := newProxy(t)
	var seen wires
	p.Watch(seen.add)
	_, ch := dialViaProxy(t, p)
	// guest may not declare an exchange in amq.*: the broker answers 403.
	if err := ch.ExchangeDeclare("amq.lab-refused", "direct", false, true, false, false, nil); err == nil {
		t.Fatal("the broker took an exchange named amq.*")
	}
	time.Sleep(100 * time.Millisecond)
	for _, w := range seen.ops() {
		if w.Op == "refused" && strings.Contains(w.Method, "ACCESS_REFUSED") {
			return
		}
	}
	t.Fatalf("the watcher saw no refusal: %+v", seen.ops())
}

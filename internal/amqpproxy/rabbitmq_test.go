package amqpproxy_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	. "github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

// These tests run against the real RabbitMQ the lab uses (LAB_AMQP_URL,
// which CI points at RabbitMQ 4.x too, else the local default), each in a
// namespace of its own (labtest): other test packages share that broker
// concurrently, so every queue and exchange gets a random name in it and
// is deleted afterwards (x-expires is a safety net).

func TestMain(m *testing.M) { labtest.Main(m) }

// brokerEnv is the test's services, in a namespace of its own (labtest.Of).
func brokerEnv(t *testing.T) *labtest.Env {
	t.Helper()
	return labtest.Of(t, labtest.RabbitMQ)
}

// brokerURL is the test's broker; upstream is where it dials.
func brokerURL(t *testing.T) string { return brokerEnv(t).Svc.Config.AMQP }

func upstream(t *testing.T) string {
	addr, err := services.AMQPAddr(brokerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// via is the broker's URL with another address in it: the same user,
// password and vhost through a proxy or a tee.
func via(t *testing.T, addr string) string {
	u, err := url.Parse(brokerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

// uniqueName is a fresh queue ("q") or exchange ("x") name in the test's
// namespace, which the harness removes (and checks for) when the test ends.
func uniqueName(t *testing.T, kind string) string {
	name := fmt.Sprintf("amqpproxy-test-%s-%s", kind, strings.ToLower(rand.Text()[:12]))
	if kind == "x" {
		return brokerEnv(t).Exchange(name)
	}
	return brokerEnv(t).Queue(name)
}

func newProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := New("", upstream(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Proxy.Close: %v", err)
		}
	})
	return p
}

// dialDirect connects to RabbitMQ without the proxy, to observe the
// broker's real state and to manage test resources.
func dialDirect(t *testing.T) *amqp.Connection {
	t.Helper()
	conn, err := amqp.Dial(brokerURL(t))
	if err != nil {
		t.Fatalf("dial RabbitMQ at %s (is it running?): %v", upstream(t), err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// dialViaProxy returns a confirm-mode channel whose traffic crosses p.
func dialViaProxy(t *testing.T, p *Proxy) (*amqp.Connection, *amqp.Channel) {
	t.Helper()
	conn, err := amqp.Dial(via(t, p.Addr()))
	if err != nil {
		t.Fatalf("dial via proxy: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("open channel via proxy: %v", err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatalf("confirm.select via proxy: %v", err)
	}
	return conn, ch
}

func withChannel(t *testing.T, conn *amqp.Connection, f func(*amqp.Channel) error) error {
	t.Helper()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", err)
	}
	defer ch.Close()
	return f(ch)
}

func declareQueue(t *testing.T, direct *amqp.Connection) string {
	t.Helper()
	name := uniqueName(t, "q")
	err := withChannel(t, direct, func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclare(name, false, true, false, false, amqp.Table{"x-expires": int32(120_000)})
		return err
	})
	if err != nil {
		t.Fatalf("declare queue %s: %v", name, err)
	}
	t.Cleanup(func() {
		withChannel(t, direct, func(ch *amqp.Channel) error {
			_, err := ch.QueueDelete(name, false, false, false)
			return err
		})
	})
	return name
}

// declareExchange declares a direct exchange with no bindings, so every
// mandatory publish to it is returned.
func declareExchange(t *testing.T, direct *amqp.Connection) string {
	t.Helper()
	name := uniqueName(t, "x")
	err := withChannel(t, direct, func(ch *amqp.Channel) error {
		return ch.ExchangeDeclare(name, amqp.ExchangeDirect, false, false, false, false, nil)
	})
	if err != nil {
		t.Fatalf("declare exchange %s: %v", name, err)
	}
	t.Cleanup(func() {
		withChannel(t, direct, func(ch *amqp.Channel) error { return ch.ExchangeDelete(name, false, false) })
	})
	return name
}

func publish(t *testing.T, ch *amqp.Channel, exchange, key string, mandatory bool, body string) *amqp.DeferredConfirmation {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, mandatory, false, amqp.Publishing{
		DeliveryMode: amqp.Persistent,
		ContentType:  "text/plain",
		Body:         []byte(body),
	})
	if err != nil {
		t.Fatalf("publish %q: %v", body, err)
	}
	return dc
}

func waitConfirm(t *testing.T, dc *amqp.DeferredConfirmation, timeout time.Duration) (bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	return dc.WaitContext(ctx)
}

func mustBeAcked(t *testing.T, dc *amqp.DeferredConfirmation, timeout time.Duration) {
	t.Helper()
	acked, err := waitConfirm(t, dc, timeout)
	if err != nil || !acked {
		t.Fatalf("confirm for delivery tag %d: acked=%t err=%v, want an ack", dc.DeliveryTag, acked, err)
	}
}

// waitQueueDepth polls through the direct connection until q holds want
// messages.
func waitQueueDepth(t *testing.T, direct *amqp.Connection, q string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	got := -1
	for time.Now().Before(deadline) {
		err := withChannel(t, direct, func(ch *amqp.Channel) error {
			info, err := ch.QueueDeclarePassive(q, false, true, false, false, nil)
			got = info.Messages
			return err
		})
		if err != nil {
			t.Fatalf("inspect queue %s: %v", q, err)
		}
		if got == want {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("queue %s holds %d messages, want %d", q, got, want)
}

func TestDropConfirmLosesOnlyConfirm2WhileBrokerStoresAll3(t *testing.T) {
	p := newProxy(t)
	direct := dialDirect(t)
	q := declareQueue(t, direct)
	_, ch := dialViaProxy(t, p)

	p.DropConfirm(2)
	dcs := make([]*amqp.DeferredConfirmation, 3)
	for i := range dcs {
		dcs[i] = publish(t, ch, "", q, false, fmt.Sprintf("msg %d", i+1))
	}
	mustBeAcked(t, dcs[0], 2*time.Second)
	mustBeAcked(t, dcs[2], 2*time.Second)
	if acked, err := waitConfirm(t, dcs[1], 2*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("confirm 2: acked=%t err=%v, want it lost (deadline exceeded)", acked, err)
	}
	// The message whose confirm was lost is nevertheless stored.
	waitQueueDepth(t, direct, q, 3)

	c := p.Counts()
	if c.Publishes != 3 || c.ConfirmsForwarded != 2 || c.ConfirmsDropped != 1 {
		t.Fatalf("counts = %+v, want 3 publishes, 2 confirms forwarded, 1 dropped", c)
	}
}

func TestDropNextConfirmsLosesTheNextConfirmWhateverItsSeq(t *testing.T) {
	p := newProxy(t)
	direct := dialDirect(t)
	q := declareQueue(t, direct)
	_, ch := dialViaProxy(t, p)

	first := publish(t, ch, "", q, false, "msg 1")
	mustBeAcked(t, first, 2*time.Second)
	p.DropNextConfirms(1)
	lost := publish(t, ch, "", q, false, "msg 2")
	if acked, err := waitConfirm(t, lost, 2*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("confirm 2: acked=%t err=%v, want it lost", acked, err)
	}
	// One-shot: the next is confirmed.
	mustBeAcked(t, publish(t, ch, "", q, false, "msg 3"), 2*time.Second)
	waitQueueDepth(t, direct, q, 3)
	if c := p.Counts(); c.ConfirmsDropped != 1 || c.ConfirmsForwarded != 2 {
		t.Fatalf("counts = %+v, want 2 forwarded and 1 dropped", c)
	}
}

func TestDropConfirmInABurstLosesOnlyTheChosenSeq(t *testing.T) {
	p := newProxy(t)
	direct := dialDirect(t)
	q := declareQueue(t, direct)
	_, ch := dialViaProxy(t, p)

	// A fast burst makes RabbitMQ confirm with multiple=true, which
	// exercises the rewrite path when it covers seq 50.
	const n, lost = 200, 50
	p.DropConfirm(lost)
	dcs := make([]*amqp.DeferredConfirmation, n)
	for i := range dcs {
		dcs[i] = publish(t, ch, "", q, false, fmt.Sprint(i+1))
	}
	for i, dc := range dcs {
		if i+1 != lost {
			mustBeAcked(t, dc, 5*time.Second)
		}
	}
	if acked, err := waitConfirm(t, dcs[lost-1], time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("confirm %d: acked=%t err=%v, want it lost", lost, acked, err)
	}
	waitQueueDepth(t, direct, q, n)

	rewritten := 0
	for _, e := range p.Events() {
		if strings.Contains(e.Note, "rewritten") {
			rewritten++
		}
	}
	t.Logf("multiple=true acks rewritten by the proxy: %d", rewritten)
	if c := p.Counts(); c.ConfirmsForwarded != n-1 || c.ConfirmsDropped != 1 {
		t.Fatalf("counts = %+v", c)
	}
}

func TestDropReturnHidesReturnWhileConfirmStillArrives(t *testing.T) {
	p := newProxy(t)
	direct := dialDirect(t)
	ex := declareExchange(t, direct)
	_, ch := dialViaProxy(t, p)
	returns := ch.NotifyReturn(make(chan amqp.Return, 1))

	p.DropReturn(1)
	dc := publish(t, ch, ex, "no-binding", true, "unroutable")
	mustBeAcked(t, dc, 5*time.Second)
	// RabbitMQ sends basic.return before the ack and amqp091-go handles
	// frames in order, so a forwarded return would already be buffered.
	select {
	case r, ok := <-returns:
		if ok {
			t.Fatalf("got basic.return %d %s despite DropReturn", r.ReplyCode, r.ReplyText)
		}
	case <-time.After(300 * time.Millisecond):
	}
	if c := p.Counts(); c.ReturnsDropped != 1 || c.ReturnsForwarded != 0 {
		t.Fatalf("counts = %+v, want 1 return dropped", c)
	}
}

func TestReturnArrivesWithoutDropReturn(t *testing.T) {
	p := newProxy(t)
	direct := dialDirect(t)
	ex := declareExchange(t, direct)
	_, ch := dialViaProxy(t, p)
	returns := ch.NotifyReturn(make(chan amqp.Return, 1))

	dc := publish(t, ch, ex, "no-binding", true, "unroutable")
	select {
	case r := <-returns:
		if r.ReplyCode != amqp.NoRoute || string(r.Body) != "unroutable" {
			t.Fatalf("return = %d %s body %q", r.ReplyCode, r.ReplyText, r.Body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no basic.return within 5s")
	}
	mustBeAcked(t, dc, 5*time.Second)
	if c := p.Counts(); c.ReturnsForwarded != 1 {
		t.Fatalf("counts = %+v, want 1 return forwarded", c)
	}
}

func TestCutAfterFirstAckClosesClientConnection(t *testing.T) {
	p := newProxy(t)
	direct := dialDirect(t)
	q := declareQueue(t, direct)
	conn, ch := dialViaProxy(t, p)
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))

	p.CutAfter(Match{Dir: ToClient, Class: ClassBasic, Method: MethodBasicAck})
	dc := publish(t, ch, "", q, false, "last words")
	// The ack is forwarded before the cut, so the client sees it.
	mustBeAcked(t, dc, 5*time.Second)
	select {
	case err := <-closed:
		if err == nil {
			t.Fatal("NotifyClose delivered nil; want an abnormal-close error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client connection not closed within 5s of the cut")
	}
	if !conn.IsClosed() {
		t.Fatal("connection reports open after cut")
	}
}

func TestDelayBothWaysDelaysConfirmByAtLeastTwiceD(t *testing.T) {
	p := newProxy(t)
	direct := dialDirect(t)
	q := declareQueue(t, direct)
	_, ch := dialViaProxy(t, p)

	const d = 300 * time.Millisecond
	p.Delay(d, Both)
	start := time.Now()
	dc := publish(t, ch, "", q, false, "slow")
	mustBeAcked(t, dc, 30*time.Second)
	// publish waits d on the way in, the ack d on the way out.
	if el := time.Since(start); el < 2*d {
		t.Fatalf("confirm after %v, want at least %v", el, 2*d)
	}
}

// recordSession captures both byte streams of a real amqp091-go session
// with RabbitMQ through a plain TCP tee.
func recordSession(t *testing.T) (toBroker, toClient []byte) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	up := upstream(t)
	var c2b, b2c bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		client, err := ln.Accept()
		if err != nil {
			return
		}
		defer client.Close()
		broker, err := net.Dial("tcp", up)
		if err != nil {
			return
		}
		defer broker.Close()
		var inner sync.WaitGroup
		inner.Add(2)
		go func() { defer inner.Done(); io.Copy(io.MultiWriter(broker, &c2b), client); broker.Close() }()
		go func() { defer inner.Done(); io.Copy(io.MultiWriter(client, &b2c), broker); client.Close() }()
		inner.Wait()
	}()

	conn, err := amqp.Dial(via(t, ln.Addr().String()))
	if err != nil {
		t.Fatalf("dial via tee: %v", err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		dc := publish(t, ch, "", q.Name, true, fmt.Sprintf("recorded %d", i))
		mustBeAcked(t, dc, 5*time.Second)
	}
	dc := publish(t, ch, "", "no-such-queue-"+q.Name, true, "returned")
	mustBeAcked(t, dc, 5*time.Second)
	deliveries, err := ch.Consume(q.Name, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case d := <-deliveries:
			d.Ack(false)
		case <-time.After(5 * time.Second):
			t.Fatal("no delivery while recording")
		}
	}
	if _, err := ch.QueueDelete(q.Name, false, false, false); err != nil {
		t.Fatal(err)
	}
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("tee did not finish")
	}
	return c2b.Bytes(), b2c.Bytes()
}

func TestForwardsRecordedRabbitMQSessionByteIdentical(t *testing.T) {
	toBroker, toClient := recordSession(t)
	if !bytes.HasPrefix(toBroker, []byte(ProtocolHeader)) || len(toClient) == 0 {
		t.Fatalf("recording looks wrong: %d/%d bytes", len(toBroker), len(toClient))
	}
	// Replay both directions through the proxy (no faults) in random
	// fragments; both ends must receive exactly the recorded bytes.
	p, client, broker := NewHarness(t)
	go WriteChunked(client, toBroker, mrand.New(mrand.NewPCG(21, 21)))
	go WriteChunked(broker, toClient, mrand.New(mrand.NewPCG(22, 22)))
	AssertEqualBytes(t, "client→broker replay", ReadExactly(t, broker, len(toBroker)), toBroker)
	AssertEqualBytes(t, "broker→client replay", ReadExactly(t, client, len(toClient)), toClient)
	if c := p.Counts(); c.Publishes != 4 || c.ReturnsForwarded != 1 {
		t.Fatalf("counts = %+v, want 4 publishes and 1 return seen", c)
	}
}

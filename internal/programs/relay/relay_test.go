package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/programs/relay"
)

func TestConfirmedEventIsMarkedSentAndCarriesItsEventIDAsMessageID(t *testing.T) {
	f := setup(t)
	f.insert(t, 42)
	h := &logHooks{}
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, Once: true, Verbose: true}, nil, h)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, att, _ := f.status(t, "order-42-created-v1"); st != "SENT" || att != 1 {
		t.Fatalf("status %s after %d attempts, want SENT after 1\n%s", st, att, h.log())
	}
	ch := f.channel(t)
	d, ok, err := ch.Get(f.queue, true)
	if err != nil || !ok {
		t.Fatalf("no message in %s: %v", f.queue, err)
	}
	if d.MessageId != "order-42-created-v1" || !strings.Contains(string(d.Body), `"orderId"`) {
		t.Fatalf("message id %q body %s", d.MessageId, d.Body)
	}
	if !strings.Contains(h.log(), "lease_token='relay-A-") {
		t.Errorf("the log does not show the guarded mark:\n%s", h.log())
	}
}

func TestUnroutableEventIsRetriedWithBackoffThenDead(t *testing.T) {
	f := setup(t)
	f.insert(t, 7)
	h := &logHooks{}
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, RoutingKey: f.queue + "-nobody", MaxAttempts: 3, BackoffSeconds: 0, Count: 1, Poll: 20 * time.Millisecond}, nil, h)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, att, le := f.status(t, "order-7-created-v1")
	if st != "DEAD" || att != 3 || !strings.Contains(le, "NO_ROUTE") {
		t.Fatalf("status %s, attempts %d, last_error %q; want DEAD after 3 with NO_ROUTE\n%s", st, att, le, h.log())
	}
	if c := r.Counts(); c.Published != 3 || c.Retried != 2 || c.Dead != 1 || c.Sent != 0 {
		t.Fatalf("counts %+v", c)
	}
}

func TestBackoffDelaysTheRetryThroughAvailableAt(t *testing.T) {
	f := setup(t)
	f.insert(t, 8)
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, RoutingKey: f.queue + "-nobody", BackoffSeconds: 60, Once: true}, nil, nil)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var wait float64
	if err := f.db.QueryRow("SELECT TIMESTAMPDIFF(MICROSECOND,NOW(6),available_at)/1e6 FROM outbox_event WHERE status='NEW'").Scan(&wait); err != nil {
		t.Fatal(err)
	}
	if wait < 50 {
		t.Fatalf("due again in %.1fs, want about 60s", wait)
	}
	n, _, err := f.relay(t, relay.Config{Name: "relay-B", SkipLocked: true}, nil, nil).Claim(context.Background())
	if err != nil || len(n) != 0 {
		t.Fatalf("claimed %d events during the backoff (%v)", len(n), err)
	}
}

func TestLostConfirmLeavesTheEventUnsentAndTheRetryPublishesItAgain(t *testing.T) {
	f := setup(t)
	f.insert(t, 42)
	p := f.proxy(t)
	p.DropConfirm(1)
	conn := f.dialThrough(t, p)
	h := &logHooks{}
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, ConfirmTimeout: 500 * time.Millisecond, BackoffSeconds: 0, Count: 1, Poll: 20 * time.Millisecond}, conn, h)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, att, le := f.status(t, "order-42-created-v1"); st != "SENT" || att != 2 || !strings.Contains(le, "no confirm") {
		t.Fatalf("status %s after %d attempts (last_error %q), want SENT after 2\n%s", st, att, le, h.log())
	}
	if c := p.Counts(); c.ConfirmsDropped != 1 || c.Publishes != 2 {
		t.Fatalf("proxy counts %+v", c)
	}
	if n := f.ready(t); n != 2 {
		t.Fatalf("the broker holds %d copies, want 2: the first publish was stored though its confirm was lost", n)
	}
}

func TestARelayWhoseConnectionIsCutReturnsAnErrorInsteadOfSpinning(t *testing.T) {
	f := setup(t)
	f.insert(t, 42)
	f.insert(t, 43)
	p := f.proxy(t)
	// Cut right after the first publish's method frame: its content never
	// arrives, and the library closes the channel (and its return channel).
	p.CutAfter(amqpproxy.Match{Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassBasic, Method: amqpproxy.MethodBasicPublish})
	conn := f.dialThrough(t, p)
	h := &logHooks{}
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, ConfirmTimeout: 500 * time.Millisecond, Poll: 20 * time.Millisecond}, conn, h)
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("Run returned nil after its connection was cut\n%s", h.log())
		}
		t.Logf("Run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatalf("the relay still runs 10 s after its connection was cut (a supervisor would never restart it)\n%s", h.log())
	}
	if st, _, _ := f.status(t, "order-42-created-v1"); st == "SENT" {
		t.Fatalf("order 42 is SENT though its publish never reached the broker whole")
	}
}

func TestRenderShowsTheStatementWithItsValues(t *testing.T) {
	got := relay.Render("UPDATE t\nSET a=?,b='?'\nWHERE id=? AND n=?", "x'y", "order-1", 3)
	want := "UPDATE t SET a='x''y',b='?' WHERE id='order-1' AND n=3"
	if got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestBrokerURLKeepsCredentialsOffTheCommandLine(t *testing.T) {
	got, err := relay.BrokerURL("amqp://u:secret@127.0.0.1:5672/vh", "127.0.0.1:41000")
	if err != nil || got != "amqp://u:secret@127.0.0.1:41000/vh" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestGracefulStopLeavesAPausedClaimToItsLease(t *testing.T) {
	f := setup(t)
	f.insert(t, 42)
	hold := newHold(relay.PointAfterClaim)
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, LeaseSeconds: 30}, nil, hold)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	<-hold.reached
	cancel() // SIGTERM in a worker process
	if err := <-done; err != nil {
		t.Fatalf("a graceful stop returned %v", err)
	}
	if st, _, _ := f.status(t, "order-42-created-v1"); st != "SENDING" {
		t.Fatalf("status %s: the claim should wait for its lease, nothing published", st)
	}
	if n := f.ready(t); n != 0 {
		t.Fatalf("%d messages published after the stop", n)
	}
}

func TestGracefulStopWhenIdleReturns(t *testing.T) {
	f := setup(t)
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, Poll: 50 * time.Millisecond}, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	time.Sleep(150 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A broker's basic.nack is no confirm: the event stays unsent, with the
// reason, for a retry. The queue here refuses every message (x-max-length
// 0, x-overflow reject-publish), which RabbitMQ answers with a nack.
func TestANackedEventIsNotMarkedSentAndIsRetried(t *testing.T) {
	f := setup(t)
	full := f.queue + ".full"
	ch := f.channel(t)
	if _, err := ch.QueueDeclare(full, true, false, false, false, amqp.Table{"x-expires": int32(600000), "x-max-length": int32(0), "x-overflow": "reject-publish"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.channel(t).QueueDelete(full, false, false, false) })
	f.insert(t, 9)
	h := &logHooks{}
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, RoutingKey: full, BackoffSeconds: 60, Once: true}, nil, h)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, att, le := f.status(t, "order-9-created-v1")
	if st == "SENT" || att != 1 || !strings.Contains(le, "nack") {
		t.Fatalf("status %s after %d attempts, last_error %q; want not SENT after 1, saying nack\n%s", st, att, le, h.log())
	}
	if c := r.Counts(); c.Sent != 0 || c.Retried != 1 {
		t.Errorf("counts %+v: want nothing sent, one retry", c)
	}
}

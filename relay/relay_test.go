package relay_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rmlab/lab/amqpproxy"
	"github.com/rmlab/lab/relay"
	"github.com/rmlab/lab/services"
)

// These tests run against the real MariaDB/MySQL and RabbitMQ, under a
// random namespace so that colleagues' runs on the same servers never meet
// them; the database and queue are dropped afterwards.

type fixture struct {
	ns    string
	db    *sql.DB // the outbox database
	conn  *amqp.Connection
	queue string
	svc   services.Config
}

func setup(t testing.TB) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	svc := services.Config{}.FromEnv()
	f := &fixture{ns: "outboxt" + strings.ToLower(rand.Text()[:6]), svc: svc}
	names := services.Names{NS: f.ns}
	server, err := services.Open(context.Background(), svc.MySQL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	name, err := relay.CreateDatabase(ctx, server, names)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = services.DropOwned(context.Background(), server, name) })
	if f.db, err = services.Open(context.Background(), svc.MySQL, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.db.Close() })
	if f.conn, err = services.DialAMQP(ctx, svc.AMQP); err != nil {
		t.Fatalf("dial RabbitMQ: %v", err)
	}
	t.Cleanup(func() { f.conn.Close() })
	f.queue = names.Name("orders")
	ch := f.channel(t)
	if _, err := ch.QueueDeclare(f.queue, true, false, false, false, amqp.Table{"x-expires": int32(600000)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ch, err := f.conn.Channel(); err == nil {
			_, _ = ch.QueueDelete(f.queue, false, false, false)
			ch.Close()
		}
	})
	return f
}

func (f *fixture) channel(t testing.TB) *amqp.Channel {
	t.Helper()
	ch, err := f.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch
}

// insert commits orders and their events the article's way: one transaction
// per order.
func (f *fixture) insert(t testing.TB, ids ...int) {
	t.Helper()
	for _, id := range ids {
		tx, err := f.db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("INSERT INTO purchase_order VALUES(?,'NEW')", id); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(`INSERT INTO outbox_event (event_id,aggregate_id,event_type,payload,status,available_at,created_at)
			VALUES (?,?,'OrderCreated',JSON_OBJECT('orderId',?,'version',1),'NEW',NOW(6),NOW(6))`,
			fmt.Sprintf("order-%d-created-v1", id), id, id); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *fixture) status(t testing.TB, event string) (status string, attempts int, lastError string) {
	t.Helper()
	var le sql.NullString
	if err := f.db.QueryRow("SELECT status,attempts,last_error FROM outbox_event WHERE event_id=?", event).Scan(&status, &attempts, &le); err != nil {
		t.Fatal(err)
	}
	return status, attempts, le.String
}

func (f *fixture) ready(t testing.TB) int {
	t.Helper()
	ch := f.channel(t)
	q, err := ch.QueueDeclarePassive(f.queue, true, false, false, false, amqp.Table{"x-expires": int32(600000)})
	if err != nil {
		t.Fatal(err)
	}
	return q.Messages
}

func (f *fixture) relay(t testing.TB, cfg relay.Config, conn *amqp.Connection, hooks relay.Hooks) *relay.Relay {
	t.Helper()
	if cfg.RoutingKey == "" {
		cfg.RoutingKey = f.queue
	}
	if conn == nil {
		conn = f.conn
	}
	r, err := relay.New(cfg, f.db, conn, hooks)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// logHooks records log lines and can hold a relay at one point until
// released.
type logHooks struct {
	mu      sync.Mutex
	lines   []string
	holdAt  string
	reached chan struct{}
	release chan struct{}
}

func newHold(point string) *logHooks {
	return &logHooks{holdAt: point, reached: make(chan struct{}, 1), release: make(chan struct{})}
}

func (h *logHooks) Reach(ctx context.Context, p string) error {
	if h.holdAt != p {
		return nil
	}
	h.reached <- struct{}{}
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func (h *logHooks) Logf(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, fmt.Sprintf(format, args...))
}

func (h *logHooks) log() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.lines, "\n")
}

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

func TestMarkWithAStaleTokenAffectsNoRowAndIsNotCountedAsSent(t *testing.T) {
	f := setup(t)
	f.insert(t, 42)
	hold := newHold(relay.PointAfterConfirm)
	a := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, LeaseSeconds: 1, Once: true}, nil, hold)
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	<-hold.reached
	time.Sleep(1500 * time.Millisecond) // A's lease runs out while it is held
	b := f.relay(t, relay.Config{Name: "relay-B", SkipLocked: true, ScanDelay: 0, Count: 1, Poll: 20 * time.Millisecond}, nil, nil)
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := a.Counts(); c.Lost != 1 || c.Sent != 0 {
		t.Fatalf("relay A counts %+v, want the mark lost\n%s", c, hold.log())
	}
	if !strings.Contains(hold.log(), "→ 0 rows affected: the claim changed hands") {
		t.Errorf("A's log does not say the mark affected 0 rows:\n%s", hold.log())
	}
	if st, att, _ := f.status(t, "order-42-created-v1"); st != "SENT" || att != 2 {
		t.Fatalf("status %s after %d attempts, want SENT after 2", st, att)
	}
	if n := f.ready(t); n != 2 {
		t.Fatalf("the broker holds %d messages, want 2 (both relays published)", n)
	}
}

func TestSkipLockedTakesTheNextRowWhilePlainForUpdateWaits(t *testing.T) {
	for _, skip := range []bool{true, false} {
		t.Run(fmt.Sprintf("skip-locked=%v", skip), func(t *testing.T) {
			f := setup(t)
			f.insert(t, 1, 2)
			hold := newHold(relay.PointClaimLocked)
			a := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: skip}, nil, hold)
			got := make(chan []relay.Event, 1)
			go func() {
				evs, _, err := a.Claim(context.Background())
				if err != nil {
					t.Error(err)
				}
				got <- evs
			}()
			<-hold.reached
			b := f.relay(t, relay.Config{Name: "relay-B", SkipLocked: skip}, nil, nil)
			bGot := make(chan []relay.Event, 1)
			start := time.Now()
			go func() {
				evs, _, err := b.Claim(context.Background())
				if err != nil {
					t.Error(err)
				}
				bGot <- evs
			}()
			const held = 700 * time.Millisecond
			var bEvs []relay.Event
			select {
			case bEvs = <-bGot:
				if !skip {
					t.Fatalf("with plain FOR UPDATE relay B claimed %v while A held the lock", bEvs)
				}
			case <-time.After(held):
				if skip {
					t.Fatalf("with SKIP LOCKED relay B still waits after %s", held)
				}
			}
			close(hold.release)
			aEvs := <-got
			if bEvs == nil {
				bEvs = <-bGot
			}
			waited := time.Since(start)
			if len(aEvs) != 1 || aEvs[0].ID != "order-1-created-v1" {
				t.Fatalf("A claimed %v", aEvs)
			}
			if len(bEvs) != 1 || bEvs[0].ID != "order-2-created-v1" {
				t.Fatalf("B claimed %v, want the next row", bEvs)
			}
			if !skip && waited < held {
				t.Fatalf("B waited only %s", waited)
			}
		})
	}
}

func TestOrderedClaimHoldsBackALaterEventOfTheSameAggregate(t *testing.T) {
	f := setup(t)
	if _, err := f.db.Exec(`INSERT INTO outbox_event (event_id,aggregate_id,event_type,payload,status,available_at,created_at) VALUES
		('order-42-created-v1',42,'OrderCreated',JSON_OBJECT('orderId',42,'version',1),'NEW',NOW(6),NOW(6)),
		('order-42-paid-v2',42,'OrderPaid',JSON_OBJECT('orderId',42,'version',2),'NEW',NOW(6),DATE_ADD(NOW(6),INTERVAL 1 MICROSECOND)),
		('order-43-created-v1',43,'OrderCreated',JSON_OBJECT('orderId',43,'version',1),'NEW',NOW(6),NOW(6))`); err != nil {
		t.Fatal(err)
	}
	a := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, Ordered: true, Batch: 10}, nil, nil)
	evs, _, err := a.Claim(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	if strings.Join(ids, ",") != "order-42-created-v1,order-43-created-v1" {
		t.Fatalf("claimed %v; the paid event must wait for the created one", ids)
	}
	evs, _, err = f.relay(t, relay.Config{Name: "relay-B", SkipLocked: true, Ordered: true, Batch: 10}, nil, nil).Claim(context.Background())
	if err != nil || len(evs) != 0 {
		t.Fatalf("relay B claimed %v (%v) while order 42's created event is in flight", evs, err)
	}
}

// proxy is a fault proxy in front of the fixture's broker.
func (f *fixture) proxy(t *testing.T) *amqpproxy.Proxy {
	t.Helper()
	upstream, err := services.AMQPAddr(f.svc.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	p, err := amqpproxy.New("", upstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// dialThrough connects to the broker through p, with the fixture's credentials.
func (f *fixture) dialThrough(t *testing.T, p *amqpproxy.Proxy) *amqp.Connection {
	t.Helper()
	target, err := relay.BrokerURL(f.svc.AMQP, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := services.DialAMQP(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
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

func TestBatchClaimAndMarkWriteAllRowsAtOnceAndFallBackWhenClaimsChangedHands(t *testing.T) {
	f := setup(t)
	f.insert(t, 1, 2, 3)
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, Batch: 3, Once: true}, nil, nil)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := r.Counts(); c.Claimed != 3 || c.Sent != 3 {
		t.Fatalf("one batch pass: %+v", c)
	}

	f.insert(t, 4, 5)
	hold := newHold(relay.PointAfterConfirm)
	a := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, Batch: 2, LeaseSeconds: 1, Once: true}, nil, hold)
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	<-hold.reached
	go func() { // the second event of the batch reaches the point too
		<-hold.reached
	}()
	time.Sleep(1500 * time.Millisecond)
	b := f.relay(t, relay.Config{Name: "relay-B", SkipLocked: true, ScanDelay: 0, Count: 2, Poll: 20 * time.Millisecond}, nil, nil)
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := a.Counts(); c.Lost != 2 || c.Sent != 0 {
		t.Fatalf("relay A %+v, want both marks lost\n%s", c, hold.log())
	}
	for _, id := range []string{"order-4-created-v1", "order-5-created-v1"} {
		if st, att, _ := f.status(t, id); st != "SENT" || att != 2 {
			t.Errorf("%s: %s after %d attempts", id, st, att)
		}
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

// token reads the lease token an event carries now.
func (f *fixture) token(t testing.TB, event string) string {
	t.Helper()
	var tok sql.NullString
	if err := f.db.QueryRow("SELECT lease_token FROM outbox_event WHERE event_id=?", event).Scan(&tok); err != nil {
		t.Fatal(err)
	}
	return tok.String
}

// Two relays running as one worker (threads, or a restart while the old
// process hangs): the first stalls past its lease with a confirmed publish,
// the second re-claims, and then the first writes back.
func TestStaleWriteBackOfTheSameWorkerMatchesItsNewerClaimOnlyWithAFixedNameToken(t *testing.T) {
	for _, fixed := range []bool{true, false} {
		t.Run(fmt.Sprintf("fixed-name=%v", fixed), func(t *testing.T) {
			f := setup(t)
			f.insert(t, 44)
			const ev = "order-44-created-v1"
			cfg := func(name string) relay.Config {
				return relay.Config{Name: name, WorkerName: "worker-C", FixedToken: fixed, SkipLocked: true,
					LeaseSeconds: 1, ScanDelay: 0, Once: true}
			}
			h1, h2 := newHold(relay.PointAfterConfirm), newHold(relay.PointAfterConfirm)
			c1, c2 := f.relay(t, cfg("relay-C1"), nil, h1), f.relay(t, cfg("relay-C2"), nil, h2)
			done1, done2 := make(chan error, 1), make(chan error, 1)
			go func() { done1 <- c1.Run(context.Background()) }()
			<-h1.reached
			first := f.token(t, ev)
			time.Sleep(1500 * time.Millisecond) // C1's lease runs out while it stalls
			go func() { done2 <- c2.Run(context.Background()) }()
			<-h2.reached // C2's scan reset the row and C2 claimed it again
			second := f.token(t, ev)
			if fixed != (first == second) {
				t.Fatalf("C1's token %q, C2's %q: fixed-name=%v", first, second, fixed)
			}
			close(h1.release)
			if err := <-done1; err != nil {
				t.Fatal(err)
			}
			close(h2.release)
			if err := <-done2; err != nil {
				t.Fatal(err)
			}
			a, b := c1.Counts(), c2.Counts()
			if fixed && (a.Sent != 1 || b.Lost != 1) {
				t.Fatalf("fixed name: C1 %+v, C2 %+v; want C1's stale mark to match C2's claim and C2's to find nothing\n%s", a, b, h2.log())
			}
			if !fixed && (a.Lost != 1 || b.Sent != 1) {
				t.Fatalf("per claim: C1 %+v, C2 %+v; want C1's stale mark to affect 0 rows and C2's to mark SENT\n%s", a, b, h1.log())
			}
			if fixed && !strings.Contains(h2.log(), "→ 0 rows affected: no longer SENDING under token worker-C") {
				t.Errorf("C2's log does not say why its mark found nothing:\n%s", h2.log())
			}
			if !fixed && !strings.Contains(h1.log(), "→ 0 rows affected: the claim changed hands") {
				t.Errorf("C1's log does not say its claim changed hands:\n%s", h1.log())
			}
			if st, att, _ := f.status(t, ev); st != "SENT" || att != 2 {
				t.Fatalf("status %s after %d attempts, want SENT after 2", st, att)
			}
		})
	}
}

func TestUnsafeClaimThatMatchedNothingSaysItNeverHeldAClaimNotThatALeaseExpired(t *testing.T) {
	f := setup(t)
	f.insert(t, 41)
	hold := newHold(relay.PointClaimLocked)
	a := f.relay(t, relay.Config{Name: "relay-A", UnsafeClaim: true, Once: true}, nil, hold)
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	<-hold.reached // A has read the row, and nothing is locked
	b := f.relay(t, relay.Config{Name: "relay-B", UnsafeClaim: true, Once: true}, nil, nil)
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := a.Counts(); c.Unclaimed != 1 || c.Lost != 0 || c.Claimed != 0 || c.Published != 1 {
		t.Fatalf("relay A %+v, want one event published without a claim\n%s", c, hold.log())
	}
	log := hold.log()
	if !strings.Contains(log, "→ 0 rows affected: this relay never claimed it") || strings.Contains(log, "lease expired") ||
		strings.Contains(log, "changed hands") || strings.Contains(log, "claimed order-41-created-v1 with lease token") {
		t.Errorf("A's log does not tell what happened:\n%s", log)
	}
	if n := f.ready(t); n != 2 {
		t.Fatalf("the broker holds %d copies, want 2", n)
	}
}

func TestLeaseScanResetsAtMostItsLimitOldestFirstAndMarksDeadPastMaxAttempts(t *testing.T) {
	f := setup(t)
	f.insert(t, 51, 52, 53)
	// Claims of relays that died: all expired, order 53's the oldest and on
	// its last attempt.
	for _, c := range []struct {
		id      int
		attempt int
		ago     int
	}{{51, 1, 2}, {52, 1, 1}, {53, 2, 3}} {
		if _, err := f.db.Exec(`UPDATE outbox_event SET status='SENDING',lease_token='gone',attempts=?,
			locked_until=DATE_SUB(NOW(6),INTERVAL ? SECOND) WHERE aggregate_id=?`, c.attempt, c.ago, c.id); err != nil {
			t.Fatal(err)
		}
	}
	h := &logHooks{}
	r := f.relay(t, relay.Config{Name: "relay-S", SkipLocked: true, ScanLimit: 2, MaxAttempts: 2, ScanDelay: 300}, nil, h)
	if n, err := r.Scan(context.Background()); err != nil || n != 2 {
		t.Fatalf("first scan reset %d (%v), want its limit, 2", n, err)
	}
	for id, want := range map[string]string{"order-53-created-v1": "DEAD", "order-51-created-v1": "NEW", "order-52-created-v1": "SENDING"} {
		if st, _, _ := f.status(t, id); st != want {
			t.Errorf("after the first scan %s is %s, want %s (oldest lease first)", id, st, want)
		}
	}
	if n, err := r.Scan(context.Background()); err != nil || n != 1 {
		t.Fatalf("second scan reset %d (%v), want the one left", n, err)
	}
	if st, att, le := f.status(t, "order-53-created-v1"); st != "DEAD" || att != 2 || le != "lease expired" {
		t.Fatalf("order 53: %s after %d attempts, last_error %q; want DEAD, lease expired", st, att, le)
	}
	if st, _, le := f.status(t, "order-52-created-v1"); st != "NEW" || le != "lease expired" {
		t.Fatalf("order 52: %s, last_error %q", st, le)
	}
	if !strings.Contains(h.log(), "LIMIT 2 → 2 rows affected") {
		t.Errorf("the scan's log does not show its limit:\n%s", h.log())
	}
}

package relay_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/programs/relay"
	"github.com/rmlab/lab/internal/services"
)

// These tests run against the real MariaDB/MySQL and RabbitMQ, each in a
// namespace of its own (labtest), so that colleagues' runs and other
// packages on the same servers never meet them; the harness drops the
// database and deletes the queue afterwards.

func TestMain(m *testing.M) { labtest.Main(m) }

type fixture struct {
	ns    string
	db    *sql.DB // the outbox database
	conn  *amqp.Connection
	queue string
	svc   services.Config
}

func setup(t testing.TB) *fixture {
	t.Helper()
	env := labtest.Connect(t, labtest.MySQL, labtest.RabbitMQ)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f := &fixture{ns: env.NS, svc: env.Config()}
	// The relay's own database: the article's outbox with the relay's
	// lease and retry columns.
	name, err := relay.CreateDatabase(ctx, env.Svc.MySQL, env.Svc.Names)
	if err != nil {
		t.Fatal(err)
	}
	f.db = env.Open(name)
	if f.conn, err = services.DialAMQP(ctx, f.svc.AMQP); err != nil {
		t.Fatalf("dial RabbitMQ: %v", err)
	}
	t.Cleanup(func() { f.conn.Close() })
	f.queue = env.Queue("orders")
	ch := f.channel(t)
	if _, err := ch.QueueDeclare(f.queue, true, false, false, false, amqp.Table{"x-expires": int32(600000)}); err != nil {
		t.Fatal(err)
	}
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

// token reads the lease token an event carries now.
// sentAts counts the different sent_at values of the orders' created events.
func (f *fixture) sentAts(t testing.TB, orders ...int) int {
	t.Helper()
	var ids []string
	for _, o := range orders {
		ids = append(ids, fmt.Sprintf("'order-%d-created-v1'", o))
	}
	var n int
	if err := f.db.QueryRow("SELECT COUNT(DISTINCT sent_at) FROM outbox_event WHERE sent_at IS NOT NULL AND event_id IN (" + strings.Join(ids, ",") + ")").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) token(t testing.TB, event string) string {
	t.Helper()
	var tok sql.NullString
	if err := f.db.QueryRow("SELECT lease_token FROM outbox_event WHERE event_id=?", event).Scan(&tok); err != nil {
		t.Fatal(err)
	}
	return tok.String
}

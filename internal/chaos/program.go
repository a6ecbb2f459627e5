package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/programs/relay"
	"github.com/rmlab/lab/internal/services"
	labsql "github.com/rmlab/lab/sql"
)

// ConsumerName is the consumer_name a consumer of the contract marks its
// operations under (the article's).
const ConsumerName = "points-award"

// ownMember is one copy of a program of its own: its proxy, through which
// the lab sees what it does and reaches it with faults, and what the proxy
// has told so far.
type ownMember struct {
	name  string
	proxy *amqpproxy.Proxy

	mu      sync.Mutex
	ids     map[wireKey]string // delivery tag (consumer) or publish seq (relay) → message id, per connection and channel
	freeze  chan struct{}      // armed by an after-ack kill: stop it at its next ack
	dropped chan struct{}      // armed by a drop-confirm: closed when its confirm was swallowed
	arming  chan struct{}      // one fault armed at a frame at a time: a second would replace the first's cut
	frozen  bool               // a pause holds it stopped now
}

type wireKey struct {
	conn int
	ch   uint16
	tag  uint64
}

// addOwn starts copy name of the program, behind a proxy of its own.
func (r *Run) addOwn(ctx context.Context, name string) error {
	addr, err := services.AMQPAddr(r.broker)
	if err != nil {
		return err
	}
	p, err := amqpproxy.New("127.0.0.1:0", addr)
	if err != nil {
		return err
	}
	m := &ownMember{name: name, proxy: p, ids: map[wireKey]string{}, arming: make(chan struct{}, 1)}
	r.own[name] = m
	p.Watch(r.onWire(m))
	p.Forbid(forbid...)
	env, err := r.ownEnv(m)
	if err != nil {
		return err
	}
	return r.sup.addOwn(name, r.O.Own, env)
}

// ownEnv is the contract's environment for one copy (challenge/CONTRACT.md).
// The DSN names the database the role works on; the parts are there too
// for clients that take them one by one.
func (r *Run) ownEnv(m *ownMember) ([]string, error) {
	db := services.IdempotencyDB
	if r.O.Own.Role == "relay" {
		db = services.OutboxDB
	}
	dc, err := r.dsnFor(m.name, r.names.Name(db))
	if err != nil {
		return nil, err
	}
	host, port := dc.Addr, "3306"
	if h, p, err := net.SplitHostPort(dc.Addr); err == nil {
		host, port = h, p
	}
	login := r.broker
	if r.ownBroker != "" {
		login = r.ownBroker
	}
	through, err := relay.BrokerURL(login, m.proxy.Addr())
	if err != nil {
		return nil, err
	}
	queue := r.names.Name(QueueName)
	copies := r.ownCopies()
	env := []string{
		"LAB_MYSQL_DSN=" + dc.FormatDSN(),
		"LAB_MYSQL_HOST=" + host, "LAB_MYSQL_PORT=" + port, "LAB_MYSQL_USER=" + dc.User,
		"LAB_MYSQL_PASSWORD=" + dc.Passwd, "LAB_MYSQL_DATABASE=" + dc.DBName,
		"LAB_AMQP_URL=" + through,
		"LAB_QUEUE=" + queue, "LAB_EXCHANGE=", "LAB_ROUTING_KEY=" + queue,
		"LAB_CONSUMER_NAME=" + ConsumerName,
		"LAB_NAME=" + m.name, "LAB_COPIES=" + strconv.Itoa(copies),
		"LAB_LEASE_SECONDS=" + strconv.Itoa(r.O.Lease),
	}
	if r.sms != nil {
		env = append(env, "LAB_SMS_URL="+r.sms.URL())
	}
	return append(env, r.O.Own.Env...), nil
}

// onWire turns what a copy's proxy saw into history: each message id with
// what was done to it, so an explanation can say "delivered to consumer-1,
// applied, killed before its ack reached the broker, redelivered".
func (r *Run) onWire(m *ownMember) func(amqpproxy.Wire) {
	return func(w amqpproxy.Wire) {
		detail := ""
		if w.Cut {
			detail = "cut"
		}
		key := wireKey{w.Conn, w.Channel, w.Tag}
		switch w.Op {
		case "consume":
			d := "queue " + w.Queue
			if w.NoAck {
				d += ", no-ack (auto-ack)"
			}
			r.Hist.Event(m.name, "consume", d)
		case "refused":
			// What the broker refused the program's login, as its own
			// line would say it: the verdict names it.
			r.Hist.Event(m.name, "output", "(the broker, to "+m.name+") "+plain.Line(w.Method, 300))
		case "forbidden":
			r.ev.forbid(fmt.Sprintf("%s sent %s at %.2fs", m.name, w.Method, w.Time.Sub(r.Hist.Start()).Seconds()))
			r.Hist.Event(m.name, "forbidden", w.Method+": refused, and its connection closed")
		case "deliver":
			m.mu.Lock()
			m.ids[key] = w.MessageID
			m.mu.Unlock()
			r.ev.deliver(m.name, w.MessageID, w.Time)
			if w.Redelivered {
				detail = "redelivered"
			}
			r.Hist.Wire(m.name, "deliver", w.MessageID, detail)
		case "publish":
			if w.Tag > 0 {
				m.mu.Lock()
				m.ids[key] = w.MessageID
				m.mu.Unlock()
			} else if !w.Cut {
				detail = "no confirm mode"
			}
			if !w.Cut {
				r.ev.note(r.ev.published, m.name, w.MessageID, w.Time)
			}
			r.Hist.Wire(m.name, "publish", w.MessageID, detail)
		case "ack", "nack", "reject", "confirm", "confirm-nack":
			m.mu.Lock()
			var ids []string
			for k, id := range m.ids {
				if k.conn == w.Conn && k.ch == w.Channel && (k.tag == w.Tag || w.Multiple && k.tag <= w.Tag) {
					ids = append(ids, id)
					delete(m.ids, k)
				}
			}
			freeze := m.freeze
			if w.Op == "ack" && !w.Cut {
				m.freeze = nil
			} else {
				freeze = nil
			}
			m.mu.Unlock()
			if freeze != nil {
				if p := r.sup.get(m.name).current(); p != nil {
					p.Freeze()
				}
				close(freeze)
			}
			if w.Dropped {
				detail = "dropped"
				m.mu.Lock()
				if m.dropped != nil {
					close(m.dropped)
					m.dropped = nil
				}
				m.mu.Unlock()
			}
			for _, id := range ids {
				switch {
				case w.Op == "ack" && !w.Cut && r.O.Own.Role == "consumer":
					r.probeAck(m.name, id, w.Time)
				case w.Op == "confirm" && !w.Cut && !w.Dropped:
					r.ev.note(r.ev.confirmed, m.name, id, w.Time)
				}
				r.Hist.Wire(m.name, w.Op, id, detail)
			}
		}
	}
}

// ownCopies is how many copies of the program run.
func (r *Run) ownCopies() int {
	if r.O.Own.Role == "relay" {
		return r.O.Relays
	}
	return r.O.Consumers
}

// Copies are the names of the program's copies (consumer-1, …); none
// without a program of its own.
func (r *Run) Copies() []string {
	if r.O.Own == nil {
		return nil
	}
	var out []string
	for i := 1; i <= r.ownCopies(); i++ {
		out = append(out, name(r.O.Own.Role, i))
	}
	return out
}

// startBalance is account n's points before the run: its own, from the
// seed, so that a program that sets a balance instead of adding to it
// shows (a consumer of the points; 0 otherwise).
func (r *Run) startBalance(n int64) int64 {
	if r.O.Own == nil || r.O.Own.Role != "consumer" || r.O.SMS || r.O.Order {
		return 0
	}
	return 100 + int64((uint64(n)*7919+r.O.Seed)%900)
}

func (r *Run) startBalances(ctx context.Context, server *sql.DB) error {
	if r.startBalance(1) == 0 {
		return nil
	}
	_, err := server.ExecContext(ctx, fmt.Sprintf("UPDATE %s.points_account SET points = 100 + MOD(user_id*7919 + %d, 900) WHERE user_id BETWEEN 1 AND %d",
		r.names.Name(services.IdempotencyDB), r.O.Seed%900, r.O.Orders))
	if err != nil {
		return fmt.Errorf("give every account its starting balance: %w", err)
	}
	return nil
}

// pick is a copy of the role chosen by the seed for fault i.
func (r *Run) pick(i int, role string) *ownMember {
	n := r.O.Consumers
	if role == "relay" {
		n = r.O.Relays
	}
	rng := rand.New(rand.NewPCG(r.O.Seed, uint64(i)+1))
	return r.own[name(role, 1+rng.IntN(n))]
}

// installAudit adds the lab's audit tables and triggers beside the
// article's (sql/chaos), so the checker knows when each application and
// each status change committed, whoever's program made it.
func installAudit(ctx context.Context, server *sql.DB, names services.Names, o Options) error {
	files := []struct{ db, file string }{
		{services.IdempotencyDB, "chaos/audit_idempotency.sql"},
		{services.IdempotencyDB, "idempotency/conflict.sql"},
		{services.IdempotencyDB, "chaos/audit_conflict.sql"},
		{services.OutboxDB, "chaos/audit_outbox.sql"},
	}
	if o.Order {
		files = append(files, struct{ db, file string }{services.IdempotencyDB, "chaos/order_view.sql"})
	}
	for _, a := range files {
		text, err := labsql.File(a.file)
		if err != nil {
			return err
		}
		c, err := server.Conn(ctx)
		if err != nil {
			return err
		}
		db := names.Name(a.db)
		_, err = c.ExecContext(ctx, "USE "+db)
		for _, st := range labsql.Split(text) {
			if err != nil {
				break
			}
			if _, err = c.ExecContext(ctx, st); err != nil {
				err = fmt.Errorf("add the lab's audit to %s: %s: %w", db, strings.SplitN(st, "\n", 2)[0], err)
			}
		}
		c.Close()
		if err != nil {
			return err
		}
	}
	if o.Order {
		return fill(ctx, server, names.Name(services.IdempotencyDB)+".order_view", o.Orders, "(%d,'NONE',0)")
	}
	return nil
}

// fill inserts a row per order 1..n into table, from a row pattern with
// the order's id.
func fill(ctx context.Context, server *sql.DB, table string, n int, row string) error {
	for from := 1; from <= n; from += 1000 {
		to := min(from+999, n)
		var b strings.Builder
		b.WriteString("INSERT IGNORE INTO " + table + " VALUES ")
		for i := from; i <= to; i++ {
			if i > from {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, row, i)
		}
		if _, err := server.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("fill %s with orders %d..%d: %w", table, from, to, err)
		}
	}
	return nil
}

// pollApplied reads the applications a consumer of its own committed (the
// lab's audit) as they come, for the live timeline and the latency, until
// ctx ends.
func (r *Run) pollApplied(ctx context.Context) {
	idem := r.names.Name(services.IdempotencyDB)
	var last int64
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		rows, err := r.server.QueryContext(c, "SELECT seq, user_id, at*1000000 FROM "+idem+".lab_applied WHERE seq > ? ORDER BY seq LIMIT 5000", last)
		if err == nil {
			for rows.Next() {
				var seq, user int64
				var us float64
				if rows.Scan(&seq, &user, &us) == nil {
					last = seq
					r.Hist.Applied(user, r.clock.lab(us/1e6))
				}
			}
			rows.Close()
		}
		cancel()
	}
}

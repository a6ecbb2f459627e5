// Package relay is the transactional outbox's relay: it claims due events
// from outbox_event, publishes them to RabbitMQ outside the claim
// transaction, and writes the outcome back guarded by the claim's lease
// token. It runs as `lab worker relay` in lessons (a real process the lab can
// pause and SIGKILL) and in-process in `lab bench relay`, with the same code.
//
// One pass:
//
//  1. claim: START TRANSACTION; SELECT ... FOR UPDATE SKIP LOCKED; UPDATE to
//     SENDING with a fresh random lease token, locked_until and attempts+1,
//     checking each UPDATE affected one row; COMMIT. Pause points
//     claim-locked (rows locked, transaction open) and after-claim.
//  2. publish each event with mandatory=true on a confirm-mode channel,
//     message id = event id (point after-publish), and wait for its confirm
//     with a timeout (point after-confirm, reached when the broker acked and
//     did not return it).
//  3. mark: confirmed and not returned → SENT, guarded by status and token;
//     0 rows affected means the claim changed hands and is logged, never
//     overwritten (point after-mark). No confirm, a nack or a return → back
//     to NEW with backoff through available_at, or DEAD past the maximum
//     attempts, with last_error.
//
// Every so often the lease-expiry scan (bounded per batch) returns claims
// whose lease ran out to NEW, or to DEAD past the maximum attempts.
//
// The token protects the table, not the broker: a relay whose lease expired
// can still publish, so the broker can receive an event twice; consumers
// must be idempotent. The relay only promises at least once.
//
// Five switches are deliberately unsafe, so lessons can show what each rule
// prevents with the same code: UnsafeClaim (no row lock and no check of the
// claim's rows affected), MarkBeforePublish (SENT first, then publish: at
// most once), FreshMessageID (a new message id per attempt), NoMandatory
// (an unroutable event is confirmed and silently dropped) and FixedToken
// (the worker's name as every claim's token, so a stale write-back of the
// same worker matches its newer claim).
package relay

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/services"
	labsql "github.com/rmlab/lab/sql"
)

// Pause points, in the order a pass reaches them.
const (
	PointClaimLocked  = "claim-locked"
	PointAfterClaim   = "after-claim"
	PointAfterPublish = "after-publish"
	PointAfterConfirm = "after-confirm"
	PointAfterMark    = "after-mark"
)

// Points are the pause points `lab worker relay` announces; a lesson's
// spawn pause-at= and wait until= are checked against them when it loads.
var Points = []string{PointClaimLocked, PointAfterClaim, PointAfterPublish, PointAfterConfirm, PointAfterMark}

// Hooks is where a pass announces its points and logs; worker.Parent in a
// `lab worker relay` process, nothing in the benchmark.
type Hooks interface {
	Reach(ctx context.Context, point string) error
	Logf(format string, args ...any)
}

// noter is Hooks that also take notes of what happened to each event
// (worker.Parent: "published", "sent", "dead"), for a caller that counts,
// such as lab chaos.
type noter interface{ Note(kind, id string) }

// Quiet is Hooks that neither pauses nor logs.
type Quiet struct{}

func (Quiet) Reach(context.Context, string) error { return nil }
func (Quiet) Logf(string, ...any)                 {}

// Config is how one relay behaves.
type Config struct {
	Name           string        // shown in the log
	WorkerName     string        // the worker this relay runs as, in lease tokens; default Name
	Exchange       string        // as sent (namespaced by the caller); "" is the default exchange
	RoutingKey     string        // as sent
	Batch          int           // events per claim
	LeaseSeconds   int           // how long a claim is ours
	MaxAttempts    int           // attempts before DEAD
	BackoffSeconds int           // first retry delay; doubles per attempt, capped
	MaxBackoff     int           // the cap, in seconds (0: maxBackoffSeconds)
	ScanDelay      int           // seconds a lease-expired event waits before it is due again
	SkipLocked     bool          // false: plain FOR UPDATE, relays wait on each other
	Ordered        bool          // one event in flight per aggregate
	ConfirmTimeout time.Duration // how long to wait for a publisher confirm
	Poll           time.Duration // idle wait when nothing is due
	ScanEvery      time.Duration // how often the lease-expiry scan runs
	ScanLimit      int           // claims one scan resets at most
	Count          int           // stop after this many events finished (SENT, DEAD or claim lost); 0 = no limit
	Once           bool          // one pass, then stop
	Verbose        bool          // log every statement with its values

	// Deliberately unsafe, for lessons.
	UnsafeClaim       bool // plain SELECT, and publish even when the claim UPDATE affected 0 rows
	MarkBeforePublish bool // mark SENT, then publish: a crash in between loses the event
	FreshMessageID    bool // message id = event id + attempt: duplicates look like new messages
	NoMandatory       bool // mandatory=false: no basic.return, an unroutable event counts as sent
	FixedToken        bool // lease token = WorkerName on every claim: a stale write-back matches a newer claim of the same worker
}

func (c *Config) defaults() {
	if c.Name == "" {
		c.Name = "relay"
	}
	if c.WorkerName == "" {
		c.WorkerName = c.Name
	}
	if c.Batch < 1 {
		c.Batch = 1
	}
	if c.LeaseSeconds < 1 {
		c.LeaseSeconds = 30
	}
	if c.MaxAttempts < 1 {
		c.MaxAttempts = 5
	}
	if c.ConfirmTimeout <= 0 {
		c.ConfirmTimeout = 5 * time.Second
	}
	if c.Poll <= 0 {
		c.Poll = 200 * time.Millisecond
	}
	if c.ScanEvery <= 0 {
		c.ScanEvery = time.Second
	}
	if c.ScanLimit < 1 {
		c.ScanLimit = 100
	}
}

// Event is one claimed outbox row.
type Event struct {
	ID          string
	AggregateID int64
	Type        string
	Payload     []byte
	Attempts    int // after this claim
	// Unclaimed (UnsafeClaim only): the claim UPDATE affected 0 rows, so
	// the row was never this relay's, and it is published anyway.
	Unclaimed bool
}

// Counts are what a relay did so far.
type Counts struct {
	Claimed   int64 // claims of single events
	Published int64 // basic.publish sent
	Sent      int64 // marked SENT
	Retried   int64 // back to NEW after a failed attempt
	Dead      int64 // marked DEAD
	Lost      int64 // the mark found the claim changed hands
	Unclaimed int64 // published without a claim (UnsafeClaim)
	Rescued   int64 // lease-expired claims the scan reset
	// Claim SELECTs that found rows and the time they took in all, lock
	// waits included:
	// the one figure where plain FOR UPDATE and SKIP LOCKED differ even when
	// throughput does not.
	ClaimSelects    int64
	ClaimSelectTime time.Duration
}

// Relay claims, publishes and marks.
type Relay struct {
	cfg   Config
	st    *Statements
	db    *sql.DB
	ch    *amqp.Channel
	rets  chan amqp.Return
	hooks Hooks
	notes noter // nil when the hooks take none

	logs     bool                   // hooks log somewhere: build the log lines
	returned map[string]amqp.Return // by message id, drained from rets
	closed   chan *amqp.Error       // the library sends the error, then closes it
	isClosed bool
	closeErr *amqp.Error
	lastScan time.Time
	finished atomic.Int64 // events SENT, DEAD or lost (retries do not count)

	claimed, published, sent, retried, dead, lost, rescued atomic.Int64
	unclaimed                                              atomic.Int64
	selects, selectNanos                                   atomic.Int64
}

// New prepares a relay on db (the outbox database selected) and a channel of
// conn of its own, put in confirm mode with returns registered.
func New(cfg Config, db *sql.DB, conn *amqp.Connection, hooks Hooks) (*Relay, error) {
	cfg.defaults()
	if hooks == nil {
		hooks = Quiet{}
	}
	st, err := LoadStatements(cfg.Ordered, cfg.SkipLocked)
	if err != nil {
		return nil, err
	}
	if cfg.UnsafeClaim {
		st.ClaimSelect = strings.TrimSuffix(strings.TrimSuffix(st.ClaimSelect, skipLockedSuffix), " FOR UPDATE")
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open an AMQP channel: %w", err)
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, fmt.Errorf("put the channel in confirm mode: %w", err)
	}
	_, quiet := hooks.(Quiet)
	r := &Relay{cfg: cfg, st: st, db: db, ch: ch, hooks: hooks, logs: !quiet, returned: map[string]amqp.Return{}}
	r.notes, _ = hooks.(noter)
	// Buffered for a whole batch: the library hands a basic.return to this
	// channel before it resolves the confirm that follows it, so after a
	// confirm the return (if any) is already waiting here.
	r.rets = ch.NotifyReturn(make(chan amqp.Return, 2*cfg.Batch+8))
	r.closed = ch.NotifyClose(make(chan *amqp.Error, 1))
	return r, nil
}

// Close releases the channel.
func (r *Relay) Close() error { return r.ch.Close() }

// Counts returns a snapshot.
func (r *Relay) Counts() Counts {
	return Counts{Claimed: r.claimed.Load(), Published: r.published.Load(), Sent: r.sent.Load(),
		Retried: r.retried.Load(), Dead: r.dead.Load(), Lost: r.lost.Load(), Unclaimed: r.unclaimed.Load(), Rescued: r.rescued.Load(),
		ClaimSelects: r.selects.Load(), ClaimSelectTime: time.Duration(r.selectNanos.Load())}
}

// EnsureColumns adds the relay's columns (sql/outbox/relay_columns.sql) when
// the table lacks them; a lesson normally shows that step itself.
func EnsureColumns(ctx context.Context, db *sql.DB) error {
	var n int
	if err := db.QueryRowContext(ctx, labsql.Statement(FileHasColumns)).Scan(&n); err != nil {
		return fmt.Errorf("look for the relay's columns: %w", err)
	}
	if n > 0 {
		return nil
	}
	st, err := LoadStatements(false, true)
	if err != nil {
		return err
	}
	for _, s := range st.Columns {
		if _, err := db.ExecContext(ctx, s); err != nil && mysqlCode(err) != 1060 { // 1060: another relay added it first
			return fmt.Errorf("add the relay's columns (%s): %w", FileColumns, err)
		}
	}
	return nil
}

// Run repeats passes until ctx ends (a graceful stop: the pass in progress
// finishes first), or --once, or --count events finished.
func (r *Relay) Run(ctx context.Context) error {
	r.hooks.Logf("%s: claiming from outbox_event (batch %d, lease %ds, max attempts %d, %s%s%s), publishing to exchange %q with routing key %q",
		r.cfg.Name, r.cfg.Batch, r.cfg.LeaseSeconds, r.cfg.MaxAttempts, r.lockMode(), orderMode(r.cfg.Ordered), r.tokenMode(), r.cfg.Exchange, r.cfg.RoutingKey)
	for {
		if ctx.Err() != nil {
			r.hooks.Logf("%s: stopping (SIGTERM): no pass in progress, nothing left half-done", r.cfg.Name)
			return nil
		}
		if time.Since(r.lastScan) >= r.cfg.ScanEvery {
			if _, err := r.Scan(ctx); err != nil {
				return err
			}
		}
		n, err := r.Pass(ctx)
		if err != nil {
			if ctx.Err() != nil {
				r.hooks.Logf("%s: stopping (SIGTERM) while paused; the claim stays SENDING until its lease expires", r.cfg.Name)
				return nil
			}
			return err
		}
		if r.cfg.Once || (r.cfg.Count > 0 && r.finished.Load() >= int64(r.cfg.Count)) {
			return nil
		}
		if n == 0 {
			t := time.NewTimer(r.cfg.Poll)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// RunPipelined is Run for throughput (`lab bench relay`): while the broker
// confirms one batch, the next batch is already being claimed and the
// previous one marked, so the database work hides behind the broker's round
// trip. At most one batch's confirms are outstanding at a time, as in Run.
// It has no pause points and runs until ctx ends; a batch claimed as it
// stops waits for its lease, like any relay that goes away.
func (r *Relay) RunPipelined(ctx context.Context) error {
	type claimed struct {
		evs   []Event
		token string
		err   error
	}
	claim := func() <-chan claimed {
		ch := make(chan claimed, 1)
		go func() {
			evs, token, err := r.Claim(ctx)
			ch <- claimed{evs, token, err}
		}()
		return ch
	}
	marks := make(chan error, 1)
	marks <- nil // no mark in flight yet
	next := claim()
	for {
		c := <-next
		if c.err != nil {
			<-marks
			return c.err
		}
		if ctx.Err() != nil {
			return <-marks
		}
		if len(c.evs) == 0 {
			t := time.NewTimer(r.cfg.Poll)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			next = claim()
			continue
		}
		if time.Since(r.lastScan) >= r.cfg.ScanEvery {
			if _, err := r.Scan(ctx); err != nil {
				<-marks
				return err
			}
		}
		next = claim()
		work := context.WithoutCancel(ctx)
		confirms := make([]*amqp.DeferredConfirmation, len(c.evs))
		for i, ev := range c.evs {
			dc, err := r.publish(work, ev)
			if err != nil {
				<-marks
				return err
			}
			confirms[i] = dc
		}
		results := make([]result, len(c.evs))
		for i, ev := range c.evs {
			results[i] = r.await(work, ev, confirms[i])
		}
		if err := <-marks; err != nil {
			return err
		}
		go func() { marks <- r.mark(work, c.evs, c.token, results) }()
	}
}

func (r *Relay) lockMode() string {
	switch {
	case r.cfg.UnsafeClaim:
		return "UNSAFE: plain SELECT, no lock, rows affected not checked"
	case r.cfg.SkipLocked:
		return "FOR UPDATE SKIP LOCKED"
	}
	return "plain FOR UPDATE"
}

func (r *Relay) tokenMode() string {
	if r.cfg.FixedToken {
		return fmt.Sprintf(", UNSAFE: lease token %q on every claim", r.cfg.WorkerName)
	}
	return ""
}

// token is the lease token of a new claim: unique per claim, so a write-back
// of an older claim can never match a newer one, even of the same worker;
// FixedToken (unsafe) makes it the worker's name.
func (r *Relay) token() string {
	if r.cfg.FixedToken {
		return r.cfg.WorkerName
	}
	return r.cfg.WorkerName + "-" + randomHex(6)
}

func orderMode(ordered bool) string {
	if ordered {
		return ", one event in flight per aggregate"
	}
	return ""
}

// Scan runs the lease-expiry scan once and returns how many claims it reset.
func (r *Relay) Scan(ctx context.Context) (int64, error) {
	r.lastScan = time.Now()
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	args := []any{r.cfg.MaxAttempts, r.cfg.ScanDelay, r.cfg.ScanLimit}
	res, err := r.db.ExecContext(c, r.st.LeaseScan, args...)
	if err != nil {
		if retryable(err) {
			return 0, nil // a lock conflict with a claim: the next scan will do
		}
		return 0, fmt.Errorf("lease-expiry scan (%s): %w", FileLeaseScan, err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		r.rescued.Add(n)
		r.hooks.Logf("%s: scan: %s → %d row%s affected: lease expired, back to NEW (or DEAD past %d attempts)",
			r.cfg.Name, Render(r.st.LeaseScan, args...), n, plural(n), r.cfg.MaxAttempts)
	}
	return n, nil
}

// Pass claims up to a batch, publishes it and writes the outcome back. It
// returns how many events it claimed.
func (r *Relay) Pass(ctx context.Context) (int, error) {
	evs, token, err := r.Claim(ctx)
	if err != nil || len(evs) == 0 {
		return 0, err
	}
	if err := r.hooks.Reach(ctx, PointAfterClaim); err != nil {
		return len(evs), err
	}
	work := context.WithoutCancel(ctx) // a graceful stop finishes the pass
	results := make([]result, len(evs))
	if r.cfg.MarkBeforePublish {
		for i := range results {
			results[i].ok = true
		}
		if err := r.mark(work, evs, token, results); err != nil {
			return len(evs), err
		}
		if err := r.reachEach(ctx, PointAfterMark, len(evs)); err != nil {
			return len(evs), err
		}
	}
	confirms := make([]*amqp.DeferredConfirmation, len(evs))
	for i, ev := range evs {
		confirms[i], err = r.publish(work, ev)
		if err != nil {
			return len(evs), err
		}
		if err := r.hooks.Reach(ctx, PointAfterPublish); err != nil {
			return len(evs), err
		}
	}
	for i, ev := range evs {
		results[i] = r.await(work, ev, confirms[i])
		if !results[i].ok {
			continue // after-confirm is where a confirmed publish waits for its mark
		}
		if err := r.hooks.Reach(ctx, PointAfterConfirm); err != nil {
			return len(evs), err
		}
	}
	if r.cfg.MarkBeforePublish {
		r.hooks.Logf("%s: already marked SENT before publishing: whatever the broker said is not written back", r.cfg.Name)
		return len(evs), nil
	}
	if err := r.mark(work, evs, token, results); err != nil {
		return len(evs), err
	}
	return len(evs), r.reachEach(ctx, PointAfterMark, len(evs))
}

func (r *Relay) reachEach(ctx context.Context, point string, n int) error {
	for range n {
		if err := r.hooks.Reach(ctx, point); err != nil {
			return err
		}
	}
	return nil
}

// backoff is the delay before attempt n+1: BackoffSeconds doubled per
// attempt, capped.
func (r *Relay) backoff(attempts int) int {
	top := r.cfg.MaxBackoff
	if top <= 0 {
		top = maxBackoffSeconds
	}
	d := r.cfg.BackoffSeconds
	for i := 1; i < attempts && d < top; i++ {
		d *= 2
	}
	return min(d, top)
}

// retryable: a deadlock (1213) or a lock wait timeout (1205) — try again.
func retryable(err error) bool { return services.Retryable(err) }

func mysqlCode(err error) uint16 { return services.Code(err) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func eventList(evs []Event) string {
	ids := make([]string, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	if len(ids) > 4 {
		return fmt.Sprintf("%s … (%d events)", strings.Join(ids[:3], ", "), len(ids))
	}
	return strings.Join(ids, ", ")
}

func attemptList(evs []Event) string {
	if len(evs) == 1 {
		return fmt.Sprint(evs[0].Attempts)
	}
	lo, hi := evs[0].Attempts, evs[0].Attempts
	for _, ev := range evs {
		lo, hi = min(lo, ev.Attempts), max(hi, ev.Attempts)
	}
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

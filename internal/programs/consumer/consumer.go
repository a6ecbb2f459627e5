// Package consumer is the lab's message consumer: it awards points for a paid
// order (or queues an SMS task, or keeps a view of an order's status) in
// blog_idempotency_lab, deduplicating with one of several strategies, some
// safe and some deliberately not, so lessons can kill the same code at named
// points and show what each leaves behind.
//
// It runs as `lab worker consumer` (see Main) and takes one message from
// flags or consumes a RabbitMQ queue:
//
//	lab worker consumer [--name N] [--pause-at p1,p2] --strategy S
//	    [--consumer points-award] [--effect points|sms-task|order-view] [--db blog_idempotency_lab] [--ttl 3600]
//	  one message from flags:  --event ID --key BUSINESS_KEY --user N --amount N
//	                           (order-view: --event ID --order N --version N --status S)
//	  or from RabbitMQ:        --queue NAME [--count N] [--ack after-commit|before-commit] [--prefetch 1]
//
// Effects:
//
//	points      UPDATE points_account SET points=points+amount WHERE user_id=?
//	sms-task    INSERT INTO sms_task (sent later by the executor)
//	order-view  the order's status and version in this consumer's row of
//	            order_view (consumer, order_id, status, version), a table the
//	            lesson creates with one row per consumer and order. The message
//	            is the outbox event's payload {"orderId","version","status"};
//	            its event id is the message-id property. Only with the
//	            strategies none and newer-version.
//
// Strategies (the mark is a consumed_operation row keyed by consumer name and
// business key unless said otherwise):
//
//	one-tx         the article's rule: mark + effect in one InnoDB transaction.
//	               A duplicate key (1062) gets an explicit ROLLBACK and a
//	               comparison with the stored row: same user and amount →
//	               "duplicate absorbed"; different → a row in consumed_conflict
//	               and outcome "conflict", never acknowledged as done.
//	blind-key      one-tx without the comparison: every 1062 counts as done,
//	               so a different payload under the same key vanishes silently.
//	message-id     one-tx keyed by the message (event) id instead of the
//	               business key: the same operation re-wrapped under a new
//	               message id is applied again.
//	mark-first     the mark commits in its own transaction, then the effect in
//	               another: dying in between leaves a mark with no effect.
//	points-first   the effect commits first (after checking for a mark), then
//	               the mark: dying in between applies the effect again on
//	               redelivery.
//	redis-first    SET lab:dedup:CONSUMER:KEY EVENT NX EX TTL, then the effect
//	               in a DB transaction with no DB mark: if the transaction
//	               fails, the Redis mark turns the retry away.
//	db-then-redis  GET the Redis mark, the effect in a DB transaction, then SET
//	               the mark: dying before the SET applies the effect again.
//	redis-filter   Redis as a fast filter in front of one-tx: a hit skips the
//	               database, a miss goes to the one-tx rule, and the mark is set
//	               only after the database committed (or absorbed) the work.
//	none           no idempotency at all: no mark is read or written, and every
//	               delivery applies the effect in its own transaction, so every
//	               copy of a message counts (order-view: each event overwrites
//	               the view in arrival order). Deliberately unsafe.
//	newer-version  order-view only: an event is applied only when it is newer
//	               than what the view holds (UPDATE ... AND version<?); an older
//	               one changes nothing and is logged "stale version N ignored
//	               (view holds M)", then acknowledged as done. No mark: the
//	               version in the row is the guard, against repeats and against
//	               events that arrive out of order (it skips the older step,
//	               which is right only when skipping is acceptable).
//
// Named pause points, in the order a strategy reaches them (a point a strategy
// has no use for is not reached):
//
//	received                    the message is decoded
//	after-redis                 the Redis mark was written (redis-first: before
//	                            the DB work; db-then-redis, redis-filter: after)
//	after-begin                 START TRANSACTION sent
//	after-mark                  the consumed_operation row inserted (uncommitted
//	                            in one-tx)
//	after-update                the effect written (points, SMS task or order
//	                            view; newer-version: also when it matched 0 rows)
//	before-commit               just before the first COMMIT
//	after-mark-commit           mark-first / points-first: the mark committed
//	after-points-commit         mark-first / points-first: the effect committed
//	after-commit                the whole handling is committed
//	before-ack, after-ack       queue mode: around basic.ack
//
// With --ack before-commit (queue mode, the unsafe order) the ack happens at
// before-commit, before the first COMMIT; with --ack after-commit (the safe
// order) after everything committed. A conflict is rejected without requeue
// (the payload is kept in consumed_conflict); a stale version (newer-version)
// is acknowledged, since ignoring it is the handling; a failure (no account,
// no view row, a database error) is nacked with requeue.
package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
	labsql "github.com/rmlab/lab/sql"
)

// Points are the pause points `lab worker consumer` announces, in the order a
// message meets them; a lesson's spawn pause-at= and wait until= are
// checked against them when it loads.
var Points = []string{"received", "poisoned", "failed", "after-park", "after-begin", "before-commit", "after-mark", "after-update", "after-commit", "after-mark-commit", "after-points-commit", "after-redis", "before-follow-up", "after-follow-up", "before-ack", "after-ack"}

// Message is one event as the consumer sees it: a payment (points,
// sms-task) or an order's new status (order-view). The JSON names are the
// ones the lessons write: the outbox payload carries orderId, version and
// status as the article's OrderCreated/OrderPaid events do.
type Message struct {
	EventID     string `json:"event_id"`
	BusinessKey string `json:"business_key"`
	UserID      int64  `json:"user_id"`
	Amount      int64  `json:"amount"`

	OrderID int64  `json:"orderId"`
	Version int64  `json:"version"`
	Status  string `json:"status"`
}

func (m Message) String() string {
	if m.Status != "" && m.BusinessKey == "" {
		return fmt.Sprintf("%s order %d version %d status %s", m.EventID, m.OrderID, m.Version, m.Status)
	}
	return fmt.Sprintf("%s key %s user %d amount %d", m.EventID, m.BusinessKey, m.UserID, m.Amount)
}

// lacks names the JSON fields an effect needs that the message does not
// carry (the event id is checked by the caller: it may come from a property).
func (m Message) lacks(e Effect) []string {
	var miss []string
	if e == EffectOrderView {
		if m.OrderID == 0 {
			miss = append(miss, "orderId")
		}
		if m.Version == 0 {
			miss = append(miss, "version")
		}
		if m.Status == "" {
			miss = append(miss, "status")
		}
		return miss
	}
	if m.BusinessKey == "" {
		miss = append(miss, "business_key")
	}
	if m.UserID == 0 {
		miss = append(miss, "user_id")
	}
	return miss
}

// Outcome is what handling one message came to.
type Outcome string

const (
	Applied  Outcome = "applied"               // the effect was written and committed
	Absorbed Outcome = "duplicate absorbed"    // judged already done; nothing written
	Conflict Outcome = "conflict"              // same key, different payload; recorded
	Stale    Outcome = "stale version ignored" // the view holds this version or newer; nothing written
)

// Result is an outcome with the line the learner reads.
type Result struct {
	Outcome Outcome
	Detail  string
}

// Strategy names one deduplication strategy (see the package doc).
type Strategy string

const (
	OneTx        Strategy = "one-tx"
	BlindKey     Strategy = "blind-key"
	MessageID    Strategy = "message-id"
	MarkFirst    Strategy = "mark-first"
	PointsFirst  Strategy = "points-first"
	RedisFirst   Strategy = "redis-first"
	DBThenRedis  Strategy = "db-then-redis"
	RedisFilter  Strategy = "redis-filter"
	None         Strategy = "none"
	NewerVersion Strategy = "newer-version"
)

// Strategies lists every strategy, for flag help and errors.
var Strategies = []Strategy{OneTx, BlindKey, MessageID, MarkFirst, PointsFirst, RedisFirst, DBThenRedis, RedisFilter, None, NewerVersion}

func (s Strategy) valid() bool { return slices.Contains(Strategies, s) }

func (s Strategy) usesRedis() bool { return s == RedisFirst || s == DBThenRedis || s == RedisFilter }

// Effect is the business change a consumer makes.
type Effect string

const (
	EffectPoints    Effect = "points"     // UPDATE points_account SET points=points+amount
	EffectSMSTask   Effect = "sms-task"   // INSERT INTO sms_task (sent later by the executor)
	EffectOrderView Effect = "order-view" // UPDATE order_view SET status,version (see the package doc)
)

// Effects lists every effect, for flag help and errors.
var Effects = []Effect{EffectPoints, EffectSMSTask, EffectOrderView}

func (e Effect) valid() bool { return slices.Contains(Effects, e) }

// fits says why a strategy cannot work with an effect, or nil. An order
// event has no business key or user to key a mark by, and newer-version
// needs a version column to compare with.
func fits(s Strategy, e Effect) error {
	switch {
	case s == NewerVersion && e != EffectOrderView:
		return fmt.Errorf("strategy %s compares versions, which only the order-view effect has: add --effect order-view", s)
	case e == EffectOrderView && s != None && s != NewerVersion:
		return fmt.Errorf("effect order-view works with the strategies %s and %s only (an order event has no business key to mark): got %s", None, NewerVersion, s)
	}
	return nil
}

// Consumer handles messages with one strategy against one database.
type Consumer struct {
	DB       *sql.DB       // opened on the (namespaced) database
	DBName   string        // for messages
	Redis    *redis.Client // only for the redis strategies
	RedisKey func(consumer, businessKey string) string
	TTL      time.Duration // Redis mark lifetime
	Name     string        // consumer_name, e.g. points-award
	Strategy Strategy
	Effect   Effect
	P        *worker.Parent
	// NS is the namespace names are sent in: the log shows the x-death
	// history's queues by the lesson's names.
	NS string
}

// ErrNoAccount: the UPDATE found no points account; the work was rolled back.
var ErrNoAccount = errors.New("no points account")

// ErrNoView: this consumer has no order_view row for the order; nothing was
// written.
var ErrNoView = errors.New("no order view row")

// ConflictError is returned in flag mode for a recorded conflict, so the
// process exits non-zero: a conflict is never a silent success.
type ConflictError struct{ Detail string }

func (e *ConflictError) Error() string { return e.Detail }

// early is called just before the first COMMIT (the unsafe ack order).
type early func(ctx context.Context) error

// Handle processes one message. before, when not nil, runs just before the
// first COMMIT the strategy sends.
func (c *Consumer) Handle(ctx context.Context, m Message, before early) (Result, error) {
	if err := c.reach(ctx, "received"); err != nil {
		return Result{}, err
	}
	if err := fits(c.Strategy, c.Effect); err != nil {
		return Result{}, err
	}
	h := &handling{c: c, m: m, before: before}
	switch c.Strategy {
	case OneTx, BlindKey, MessageID:
		return h.oneTx(ctx)
	case MarkFirst:
		return h.markFirst(ctx)
	case PointsFirst:
		return h.pointsFirst(ctx)
	case RedisFirst:
		return h.redisFirst(ctx)
	case DBThenRedis:
		return h.dbThenRedis(ctx)
	case RedisFilter:
		return h.redisFilter(ctx)
	case None, NewerVersion:
		return h.applyEach(ctx)
	}
	return Result{}, fmt.Errorf("unknown strategy %q (known: %s)", c.Strategy, strategyList())
}

func strategyList() string {
	var s []string
	for _, x := range Strategies {
		s = append(s, string(x))
	}
	return strings.Join(s, ", ")
}

func (c *Consumer) reach(ctx context.Context, point string) error {
	if c.P == nil {
		return nil
	}
	return c.P.Reach(ctx, point)
}

func (c *Consumer) logf(format string, args ...any) {
	if c.P != nil {
		c.P.Logf(format, args...)
	}
}

// handling is one message going through one strategy.
type handling struct {
	c      *Consumer
	m      Message
	before early
	called bool
	stale  string // newer-version: why the event changed nothing
}

// commit runs the early hook once, reaches before-commit and commits.
func (h *handling) commit(ctx context.Context, tx *sql.Tx) error {
	if h.before != nil && !h.called {
		h.called = true
		if err := h.before(ctx); err != nil {
			tx.Rollback()
			return err
		}
	}
	if err := h.c.reach(ctx, "before-commit"); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("COMMIT in %s: %w", h.c.DBName, err)
	}
	return nil
}

// key is what the mark is keyed by: the business key, or (message-id) the
// event id.
func (h *handling) key() string {
	if h.c.Strategy == MessageID {
		return h.m.EventID
	}
	return h.m.BusinessKey
}

// begin starts a transaction on one connection and reaches after-begin.
func (h *handling) begin(ctx context.Context, point bool) (*sql.Tx, error) {
	tx, err := h.c.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, h.c.dbErr("START TRANSACTION", err)
	}
	if point {
		if err := h.c.reach(ctx, "after-begin"); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	return tx, nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// insertMark writes the consumed_operation row. dup reports a 1062.
func (h *handling) insertMark(ctx context.Context, x execer) (dup bool, err error) {
	_, err = x.ExecContext(ctx, stmtMarkInsert, h.c.Name, h.key(), h.m.EventID, h.m.UserID, h.m.Amount)
	if services.Code(err) == services.ErDupEntry {
		return true, nil
	}
	if err != nil {
		return false, h.c.dbErr("INSERT INTO consumed_operation", err)
	}
	return false, nil
}

// effect writes the business change and checks that it found its row.
func (h *handling) effect(ctx context.Context, x execer) error {
	switch h.c.Effect {
	case EffectOrderView:
		return h.orderView(ctx, x)
	case EffectSMSTask:
		_, err := x.ExecContext(ctx, stmtSMSTaskInsert,
			h.c.Name+":"+h.m.BusinessKey, h.m.UserID,
			fmt.Sprintf("Order paid: %d points are on their way (%s)", h.m.Amount, h.m.BusinessKey))
		if services.Code(err) == services.ErNoSuchTable {
			return fmt.Errorf("table sms_task does not exist in %s: the lesson creates it with sql/idempotency/sms_task.sql", h.c.DBName)
		}
		if err != nil {
			return h.c.dbErr("INSERT INTO sms_task", err)
		}
		return nil
	default:
		res, err := x.ExecContext(ctx, stmtPointsUpdate, h.m.Amount, h.m.UserID)
		if err != nil {
			return h.c.dbErr("UPDATE points_account", err)
		}
		// 0 rows is not an SQL error; the application must check it.
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w for user %d: UPDATE matched 0 rows", ErrNoAccount, h.m.UserID)
		}
		return nil
	}
}

// orderView writes the event's status and version into this consumer's row
// of order_view: whatever the row holds (none), or only over an older
// version (newer-version). A stale event sets h.stale and writes nothing.
func (h *handling) orderView(ctx context.Context, x execer) error {
	m := h.m
	q := stmtOrderViewUpdate
	shown := fmt.Sprintf("UPDATE order_view SET status='%s',version=%d WHERE consumer='%s' AND order_id=%d", m.Status, m.Version, h.c.Name, m.OrderID)
	args := []any{m.Status, m.Version, h.c.Name, m.OrderID}
	guard := h.c.Strategy == NewerVersion
	if guard {
		q = stmtOrderViewUpdateNewer
		shown += fmt.Sprintf(" AND version<%d", m.Version)
		args = append(args, m.Version)
	}
	res, err := x.ExecContext(ctx, q, args...)
	if services.Code(err) == services.ErNoSuchTable {
		return fmt.Errorf("table order_view does not exist in %s: the lesson creates it (consumer, order_id, status, version) with one row per consumer and order", h.c.DBName)
	}
	if err != nil {
		return h.c.dbErr("UPDATE order_view", err)
	}
	n, _ := res.RowsAffected()
	h.c.logf("%s → %s", shown, rowsAffected(n))
	if n > 0 {
		return nil
	}
	// 0 rows is not an SQL error. It means no row, or (MySQL counts changed
	// rows) a row that already holds these values, or, with the guard, a row
	// at this version or newer: read the row to tell which.
	var status string
	var held int64
	err = x.QueryRowContext(ctx, stmtOrderViewSelect, h.c.Name, m.OrderID).Scan(&status, &held)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w for order %d of consumer %s in %s: UPDATE matched 0 rows (insert the row first: INSERT INTO order_view VALUES('%s',%d,'NONE',0))",
			ErrNoView, m.OrderID, h.c.Name, h.c.DBName, h.c.Name, m.OrderID)
	}
	if err != nil {
		return h.c.dbErr("SELECT the order_view row", err)
	}
	if !guard {
		return nil // the row already held exactly this status and version
	}
	why := fmt.Sprintf("stale version %d ignored (view holds %d)", m.Version, held)
	if held == m.Version {
		why = fmt.Sprintf("version %d already applied (view holds %d), ignored", m.Version, held)
	}
	h.stale = fmt.Sprintf("%s: order %d stays %s in %s's view (%s); nothing written", why, m.OrderID, status, h.c.Name, m.EventID)
	return nil
}

func rowsAffected(n int64) string {
	if n == 1 {
		return "1 row affected"
	}
	return fmt.Sprintf("%d rows affected", n)
}

func (h *handling) appliedText() string {
	if h.c.Effect == EffectOrderView {
		return fmt.Sprintf("applied: order %d is %s (version %d) in %s's view (%s)", h.m.OrderID, h.m.Status, h.m.Version, h.c.Name, h.m.EventID)
	}
	if h.c.Effect == EffectSMSTask {
		return fmt.Sprintf("applied: SMS task %s:%s queued for user %d (%s, %s)", h.c.Name, h.m.BusinessKey, h.m.UserID, h.m.BusinessKey, h.m.EventID)
	}
	return fmt.Sprintf("applied: +%d points to user %d (%s, %s)", h.m.Amount, h.m.UserID, h.m.BusinessKey, h.m.EventID)
}

// oneTx is one-tx, blind-key and message-id: mark and effect in one
// transaction; they differ in the key and in what a duplicate means.
func (h *handling) oneTx(ctx context.Context) (Result, error) {
	tx, err := h.begin(ctx, true)
	if err != nil {
		return Result{}, err
	}
	dup, err := h.insertMark(ctx, tx)
	if err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if dup {
		// 1062 rolled back the statement only; end the transaction
		// explicitly before looking at the stored row.
		if err := tx.Rollback(); err != nil {
			return Result{}, h.c.dbErr("ROLLBACK", err)
		}
		h.c.logf("mark %s/%s exists (1062): rolled back", h.c.Name, h.key())
		return h.compare(ctx)
	}
	if err := h.c.reach(ctx, "after-mark"); err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if err := h.effect(ctx, tx); err != nil {
		tx.Rollback()
		return Result{}, fmt.Errorf("%w; rolled back, nothing committed", err)
	}
	if err := h.c.reach(ctx, "after-update"); err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if err := h.commit(ctx, tx); err != nil {
		return Result{}, err
	}
	if err := h.c.reach(ctx, "after-commit"); err != nil {
		return Result{}, err
	}
	return Result{Outcome: Applied, Detail: h.appliedText()}, nil
}

// compare reads the stored mark after a duplicate key and decides.
func (h *handling) compare(ctx context.Context) (Result, error) {
	var ev string
	var user, amount int64
	err := h.c.DB.QueryRowContext(ctx, stmtMarkSelect, h.c.Name, h.key()).Scan(&ev, &user, &amount)
	if err != nil {
		return Result{}, h.c.dbErr("SELECT the stored consumed_operation row", err)
	}
	stored := fmt.Sprintf("stored %s user %d amount %d", ev, user, amount)
	if h.c.Strategy == BlindKey || (user == h.m.UserID && amount == h.m.Amount) {
		return Result{Outcome: Absorbed, Detail: fmt.Sprintf("duplicate absorbed: %s already did %s (%s); nothing written",
			h.c.Name, h.key(), stored)}, nil
	}
	if err := h.recordConflict(ctx, ev, user, amount); err != nil {
		return Result{}, err
	}
	return Result{Outcome: Conflict, Detail: fmt.Sprintf("conflict: %s %s has %s, the message says user %d amount %d; recorded in consumed_conflict, not acknowledged as done",
		h.c.Name, h.key(), stored, h.m.UserID, h.m.Amount)}, nil
}

func (h *handling) recordConflict(ctx context.Context, ev string, user, amount int64) error {
	args := []any{h.c.Name, h.key(), h.m.EventID, h.m.UserID, h.m.Amount, ev, user, amount}
	_, err := h.c.DB.ExecContext(ctx, stmtConflictInsert, args...)
	if services.Code(err) == services.ErNoSuchTable {
		// The lesson did not create the table: create it from the same file.
		ddl, ferr := labsql.File("idempotency/conflict.sql")
		if ferr != nil {
			return ferr
		}
		for _, st := range labsql.Split(ddl) {
			if _, err := h.c.DB.ExecContext(ctx, st); err != nil {
				return h.c.dbErr("create consumed_conflict", err)
			}
		}
		_, err = h.c.DB.ExecContext(ctx, stmtConflictInsert, args...)
	}
	if err != nil {
		return h.c.dbErr("record the conflict in consumed_conflict", err)
	}
	return nil
}

func (c *Consumer) dbErr(what string, err error) error {
	switch services.Code(err) {
	case services.ErBadDB:
		return fmt.Errorf("%s: database %s does not exist: run the lesson's reset step (reset db=blog_idempotency_lab): %w", what, c.DBName, err)
	case services.ErNoSuchTable:
		return fmt.Errorf("%s: a table is missing in %s: run the lesson's reset step: %w", what, c.DBName, err)
	}
	return fmt.Errorf("%s in %s: %w", what, c.DBName, err)
}

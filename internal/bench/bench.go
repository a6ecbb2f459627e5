// Package bench measures what the transactional outbox costs: `lab bench
// relay` pushes events through the lab's relay (the same code as `lab worker
// relay`, run as goroutines) into a real queue, and in the same run
// publishes the same number of messages of the same shape to the same queue
// with no database at all. The ratio of the two rates is the price of the
// outbox itself: the claim transaction, the mark transaction and the polling.
//
// Three measurements, each on a purged queue:
//
//   - throughput: N events are committed first, then W relays drain them;
//     events/s = N / (time from the relays' start to the last SENT). Each
//     relay claims B events, publishes them, waits for their confirms and
//     marks them, and claims the next batch and marks the last one while
//     the broker confirms (relay.RunPipelined), so at most B confirms are
//     outstanding per relay.
//   - baseline: W publishers, each on its own connection and confirm-mode
//     channel, publish N messages in windows of B outstanding confirms, the
//     relay's shape: mandatory, persistent, message id, the same body.
//   - latency: while W relays run, a producer commits events one per
//     transaction at half the measured relay rate; p50/p99 of
//     sent_at − created_at (both the server's NOW(6)), i.e. commit to SENT
//     at a load the relays can sustain.
//
// Throughput and baseline alternate for Rounds rounds and the medians are
// reported: the machine is shared, and a burst of other load should not
// land on one side only.
//
// With DBLatency (--db-latency D) the relays, and only they, reach the
// database through a LatencyProxy that delays every chunk by D each way, so
// each of their statements costs about 2·D more, as against a database in
// another rack; the producer and the baseline keep the direct link.
// ClaimHold (--claim-hold) is the synthetic variant: it only keeps the claim
// transaction open longer.
//
// Everything it creates is namespaced (database blog_outbox_lab_NSbench,
// queue bench.relay_NSbench) and dropped at the end.
package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rmlab/lab/internal/programs/relay"
	"github.com/rmlab/lab/internal/services"
)

// Options are `lab bench relay`'s flags.
type Options struct {
	Events     int
	Workers    int
	Batch      int
	SkipLocked bool
	Poll       time.Duration // relays' idle wait
	Rounds     int           // relay and baseline runs, alternated; the medians are reported
	NoPipeline bool          // relays claim, publish and mark strictly in turn (relay.Run)
	ClaimHold  time.Duration // keep each claim transaction open this long (synthetic: a slower database link)
	DBLatency  time.Duration // relays reach the database through a LatencyProxy adding this one-way delay
	Progress   func(string)  // phase lines, for stderr
}

// Result is what `lab bench relay --json` prints.
type Result struct {
	Events         int     `json:"events"`
	Workers        int     `json:"workers"`
	Batch          int     `json:"batch"`
	SkipLocked     bool    `json:"skip_locked"`
	EventsPerSec   float64 `json:"events_per_sec"`
	BaselinePerSec float64 `json:"baseline_per_sec"`
	Ratio          float64 `json:"ratio"`
	P50ms          float64 `json:"p50_ms"`
	P99ms          float64 `json:"p99_ms"`
	DBLatencyMs    float64 `json:"db_latency_ms"` // one-way delay between relays and database (0: loopback)
	// ClaimSelectMs is the mean time a claim's SELECT ... FOR UPDATE [SKIP
	// LOCKED] took, lock waits included (median over the rounds): where the
	// two lock modes differ even when the rates do not.
	ClaimSelectMs float64 `json:"claim_select_ms"`
	LatencyEvents int     `json:"-"`
	LatencyRate   float64 `json:"-"`
}

// String is the human-readable report.
func (r Result) String() string {
	lock := "FOR UPDATE SKIP LOCKED"
	if !r.SkipLocked {
		lock = "plain FOR UPDATE"
	}
	link := ""
	if r.DBLatencyMs > 0 {
		link = fmt.Sprintf(", database %.3g ms away each way", r.DBLatencyMs)
	}
	return fmt.Sprintf(`relay benchmark: %d events, %d workers, batch %d, %s%s
  outbox relay   %8.0f events/s   (commit → claim → publish → confirm → SENT)
  baseline       %8.0f msgs/s     (same publishes, no database)
  ratio          %8.2f
  commit → SENT  p50 %.1f ms, p99 %.1f ms  (%d events committed one per transaction at %.0f/s)
  claim SELECT   %.2f ms on average, lock waits included`,
		r.Events, r.Workers, r.Batch, lock, link, r.EventsPerSec, r.BaselinePerSec, r.Ratio, r.P50ms, r.P99ms, r.LatencyEvents, r.LatencyRate, r.ClaimSelectMs)
}

// body is the event payload, the same bytes for relay and baseline.
const bodyFormat = `{"orderId": %d, "version": 2, "business_key": "order:%d:paid", "user_id": 7, "amount": 10}`

type env struct {
	cfg    services.Config
	names  services.Names
	server *sql.DB
	db     *sql.DB // the producer's, the setup's and the queries'
	relDB  *sql.DB // the relays': db, or a pool through proxy
	proxy  *LatencyProxy
	dbName string
	queue  string
	conns  []*amqp.Connection
	round  int // throughput runs so far: each commits its own event ids
}

// Run runs the three phases against the services cfg names.
func Run(ctx context.Context, cfg services.Config, o Options) (Result, error) {
	if o.Events < 1 || o.Workers < 1 {
		return Result{}, fmt.Errorf("--events and --workers must be at least 1")
	}
	if o.Batch < 1 {
		o.Batch = 1
	}
	if o.Poll <= 0 {
		o.Poll = 20 * time.Millisecond
	}
	if o.Rounds < 1 {
		o.Rounds = 3
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	cfg = cfg.FromEnv()
	ns := cfg.Namespace + "bench"
	if len(ns) > 16 {
		ns = ns[:16]
	}
	e := &env{cfg: cfg, names: services.Names{NS: ns}}
	defer e.close()
	if err := e.open(ctx, o.Workers, o.DBLatency); err != nil {
		return Result{}, err
	}
	res := Result{Events: o.Events, Workers: o.Workers, Batch: o.Batch, SkipLocked: o.SkipLocked,
		DBLatencyMs: float64(o.DBLatency) / float64(time.Millisecond)}
	if e.proxy != nil {
		defer func() {
			n, mean := e.proxy.Observed()
			o.Progress(fmt.Sprintf("database link: %d chunks forwarded, each held %s on average (asked: %s)", n, mean.Round(time.Microsecond), o.DBLatency))
		}()
	}

	// The machine is shared: alternate the relay and the baseline and keep
	// the median of each, so a burst of someone else's load skews neither.
	var rel, base, sel []float64
	for round := 1; round <= o.Rounds; round++ {
		o.Progress(fmt.Sprintf("round %d/%d: %d events committed, then drained by %d relays", round, o.Rounds, o.Events, o.Workers))
		eps, selMs, err := e.throughput(ctx, o)
		if err != nil {
			return res, err
		}
		o.Progress(fmt.Sprintf("round %d/%d: baseline, %d messages from %d publishers, %d confirms outstanding each", round, o.Rounds, o.Events, o.Workers, o.Batch))
		bps, err := e.baseline(ctx, o)
		if err != nil {
			return res, err
		}
		o.Progress(fmt.Sprintf("round %d/%d: relay %.0f events/s, baseline %.0f msgs/s", round, o.Rounds, eps, bps))
		rel, base, sel = append(rel, eps), append(base, bps), append(sel, selMs)
	}
	res.EventsPerSec, res.BaselinePerSec, res.ClaimSelectMs = median(rel), median(base), median(sel)
	if res.BaselinePerSec > 0 {
		res.Ratio = res.EventsPerSec / res.BaselinePerSec
	}
	eps := res.EventsPerSec

	res.LatencyRate = eps / 2
	res.LatencyEvents = min(o.Events, max(200, int(res.LatencyRate*3)))
	o.Progress(fmt.Sprintf("latency: %d events committed one per transaction at %.0f/s while the relays run", res.LatencyEvents, res.LatencyRate))
	var err error
	if res.P50ms, res.P99ms, err = e.latency(ctx, o, res.LatencyEvents, res.LatencyRate); err != nil {
		return res, err
	}
	return res, nil
}

func (e *env) open(ctx context.Context, workers int, latency time.Duration) error {
	var err error
	if e.server, err = services.Open(ctx, e.cfg.MySQL, ""); err != nil {
		return err
	}
	if e.dbName, err = relay.CreateDatabase(ctx, e.server, e.names); err != nil {
		return err
	}
	if e.db, err = services.Open(ctx, e.cfg.MySQL, e.dbName); err != nil {
		return err
	}
	e.db.SetMaxOpenConns(workers*2 + 4)
	e.db.SetMaxIdleConns(workers*2 + 4)
	e.relDB = e.db
	if latency > 0 {
		if err := e.openProxied(latency, workers); err != nil {
			return err
		}
	}
	for i := 0; i < workers+1; i++ {
		c, err := services.OpenAMQP(ctx, e.cfg.AMQP)
		if err != nil {
			return err
		}
		e.conns = append(e.conns, c)
	}
	e.queue = e.names.Name("bench.relay")
	return e.onAdmin(func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclare(e.queue, true, false, false, false, nil)
		return err
	})
}

// openProxied opens the relays' pool through a LatencyProxy in front of the
// server; the producer and the baseline keep the direct link.
func (e *env) openProxied(latency time.Duration, workers int) error {
	mc, err := gomysql.ParseDSN(e.cfg.MySQL)
	if err != nil {
		return err
	}
	network := mc.Net
	if network == "" {
		network = "tcp"
	}
	addr := mc.Addr
	if addr == "" {
		addr = "127.0.0.1:3306"
	}
	if e.proxy, err = NewLatencyProxy(network, addr, latency); err != nil {
		return fmt.Errorf("start the database latency proxy: %w", err)
	}
	mc.Net, mc.Addr = "tcp", e.proxy.Addr()
	if e.relDB, err = services.Open(context.Background(), mc.FormatDSN(), e.dbName); err != nil {
		return err
	}
	e.relDB.SetMaxOpenConns(workers*3 + 2)
	e.relDB.SetMaxIdleConns(workers*3 + 2)
	return nil
}

// onAdmin runs f on a fresh channel of the spare connection.
func (e *env) onAdmin(f func(*amqp.Channel) error) error {
	ch, err := e.conns[len(e.conns)-1].Channel()
	if err != nil {
		return err
	}
	defer ch.Close()
	return f(ch)
}

func (e *env) purge() error {
	return e.onAdmin(func(ch *amqp.Channel) error {
		_, err := ch.QueuePurge(e.queue, false)
		return err
	})
}

func (e *env) close() {
	if len(e.conns) > 0 && e.queue != "" {
		_ = e.onAdmin(func(ch *amqp.Channel) error {
			_, err := ch.QueueDelete(e.queue, false, false, false)
			return err
		})
	}
	for _, c := range e.conns {
		c.Close()
	}
	if e.relDB != nil && e.relDB != e.db {
		e.relDB.Close()
	}
	if e.proxy != nil {
		e.proxy.Close()
	}
	if e.db != nil {
		e.db.Close()
	}
	if e.server != nil {
		if e.dbName != "" {
			_, _ = services.DropOwned(context.Background(), e.server, e.dbName)
		}
		e.server.Close()
	}
}

// insert commits events [from, from+n) in transactions of per rows.
func (e *env) insert(ctx context.Context, prefix string, from, n, per int) error {
	for done := 0; done < n; {
		k := min(per, n-done)
		var b strings.Builder
		args := make([]any, 0, 3*k)
		b.WriteString("INSERT INTO outbox_event (event_id,aggregate_id,event_type,payload,status,available_at,created_at) VALUES ")
		for i := 0; i < k; i++ {
			id := from + done + i
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?,?,'OrderPaid',?,'NEW',NOW(6),NOW(6))")
			args = append(args, fmt.Sprintf("%s-%d", prefix, id), id, fmt.Sprintf(bodyFormat, id, id))
		}
		if _, err := e.db.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("insert bench events: %w", err)
		}
		done += k
	}
	return nil
}

// relays starts W relays and returns them with a stop function.
func (e *env) relays(ctx context.Context, o Options) ([]*relay.Relay, func() error, error) {
	rctx, cancel := context.WithCancel(ctx)
	var rs []*relay.Relay
	for i := 0; i < o.Workers; i++ {
		r, err := relay.New(relay.Config{Name: fmt.Sprintf("bench-%d", i), RoutingKey: e.queue, Batch: o.Batch,
			LeaseSeconds: 60, MaxAttempts: 5, BackoffSeconds: 1, SkipLocked: o.SkipLocked,
			ConfirmTimeout: 30 * time.Second, Poll: o.Poll, ScanEvery: 5 * time.Second}, e.relDB, e.conns[i], holdHooks(o.ClaimHold))
		if err != nil {
			cancel()
			return nil, nil, err
		}
		rs = append(rs, r)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(rs))
	for i, r := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o.NoPipeline {
				errs[i] = r.Run(rctx)
			} else {
				errs[i] = r.RunPipelined(rctx)
			}
		}()
	}
	stop := func() error {
		cancel()
		wg.Wait()
		for _, r := range rs {
			r.Close()
		}
		return errors.Join(errs...)
	}
	return rs, stop, nil
}

// hold keeps the claim transaction open for d at the relay's claim-locked
// point, as a database a few network round trips away would.
type hold struct{ d time.Duration }

func (h hold) Reach(_ context.Context, point string) error {
	if point == relay.PointClaimLocked {
		time.Sleep(h.d)
	}
	return nil
}
func (hold) Logf(string, ...any) {}

func holdHooks(d time.Duration) relay.Hooks {
	if d <= 0 {
		return nil
	}
	return hold{d}
}

func sent(rs []*relay.Relay) (n int64) {
	for _, r := range rs {
		n += r.Counts().Sent
	}
	return n
}

// waitSent waits until the relays marked want events SENT.
func waitSent(ctx context.Context, rs []*relay.Relay, want int64) error {
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for sent(rs) < want {
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped with %d of %d events SENT: %w", sent(rs), want, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// throughput drains N events and returns events/s and the mean claim
// SELECT time in ms.
func (e *env) throughput(ctx context.Context, o Options) (float64, float64, error) {
	if err := e.purge(); err != nil {
		return 0, 0, err
	}
	e.round++
	if err := e.insert(ctx, fmt.Sprintf("tp%d", e.round), 0, o.Events, 500); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	rs, stop, err := e.relays(ctx, o)
	if err != nil {
		return 0, 0, err
	}
	werr := waitSent(ctx, rs, int64(o.Events))
	d := time.Since(start)
	if err := errors.Join(werr, stop()); err != nil {
		return 0, 0, err
	}
	var n int64
	var took time.Duration
	for _, r := range rs {
		c := r.Counts()
		n, took = n+c.ClaimSelects, took+c.ClaimSelectTime
	}
	var selMs float64
	if n > 0 {
		selMs = float64(took) / float64(n) / float64(time.Millisecond)
	}
	return float64(o.Events) / d.Seconds(), selMs, nil
}

func (e *env) latency(ctx context.Context, o Options, n int, rate float64) (p50, p99 float64, err error) {
	if err := e.purge(); err != nil {
		return 0, 0, err
	}
	rs, stop, err := e.relays(ctx, o)
	if err != nil {
		return 0, 0, err
	}
	gap := time.Duration(float64(time.Second) / max(rate, 1))
	next := time.Now()
	for i := 0; i < n && err == nil; i++ {
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		next = next.Add(gap)
		err = e.insert(ctx, "lat", i, 1, 1)
	}
	if err == nil {
		err = waitSent(ctx, rs, int64(n))
	}
	if err = errors.Join(err, stop()); err != nil {
		return 0, 0, err
	}
	rows, err := e.db.QueryContext(ctx, "SELECT TIMESTAMPDIFF(MICROSECOND,created_at,sent_at) FROM outbox_event WHERE event_id LIKE 'lat-%' AND status='SENT'")
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var us []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			return 0, 0, err
		}
		us = append(us, v/1000)
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	return percentile(us, 0.50), percentile(us, 0.99), nil
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	i := int(p*float64(len(v))+0.5) - 1
	return v[min(max(i, 0), len(v)-1)]
}

func (e *env) baseline(ctx context.Context, o Options) (float64, error) {
	if err := e.purge(); err != nil {
		return 0, err
	}
	chans := make([]*amqp.Channel, o.Workers)
	for i := range chans {
		ch, err := e.conns[i].Channel()
		if err != nil {
			return 0, err
		}
		defer ch.Close()
		if err := ch.Confirm(false); err != nil {
			return 0, err
		}
		chans[i] = ch
	}
	var wg sync.WaitGroup
	errs := make([]error, o.Workers)
	start := time.Now()
	for w := 0; w < o.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = publishShare(ctx, chans[w], e.queue, w, o)
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(o.Events) / d.Seconds(), nil
}

// publishShare publishes worker w's share of the events in windows of
// o.Batch outstanding confirms, as the relay publishes a claimed batch.
func publishShare(ctx context.Context, ch *amqp.Channel, queue string, w int, o Options) error {
	var window []*amqp.DeferredConfirmation
	flush := func() error {
		for _, dc := range window {
			c, cancel := context.WithTimeout(ctx, 30*time.Second)
			ok, err := dc.WaitContext(c)
			cancel()
			if err != nil || !ok {
				return fmt.Errorf("baseline publish not confirmed (%v)", err)
			}
		}
		window = window[:0]
		return nil
	}
	for id := w; id < o.Events; id += o.Workers {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, amqp.Publishing{
			MessageId: fmt.Sprintf("base-%d", id), Type: "OrderPaid", ContentType: "application/json",
			DeliveryMode: amqp.Persistent, Timestamp: time.Now(), Body: []byte(fmt.Sprintf(bodyFormat, id, id)),
		})
		if err != nil {
			return err
		}
		window = append(window, dc)
		if len(window) >= o.Batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

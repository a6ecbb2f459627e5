package chaos

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/dbnode"
	"github.com/rmlab/lab/internal/node"
	"github.com/rmlab/lab/internal/programs/relay"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Run is one chaos run: the pipeline's processes, the proxy in front of the
// broker, the node it may own, and what it recorded.
type Run struct {
	O        Options
	Plan     []Fault // the schedule
	Hist     *History
	Workers  *worker.Group // every process started, for the screen
	Notes    []string      // what the run left out and why
	cfg      services.Config
	names    services.Names
	server   *sql.DB
	broker   string // the URL the workers' proxy forwards to
	version  string
	nodes    *node.Set
	proxy    *amqpproxy.Proxy
	sup      *supervisor
	faultsBy map[FaultKind]int
	brokerMu sync.Mutex // one broker restart at a time
	own      map[string]*ownMember
	sms      *smsProvider // Options.SMS
	stalled  bool         // the drain stopped because nothing moved

	// A program of its own: the logins it was given (Users says them),
	// the clock of the audit, the starting balances and what its proxies
	// saw (evidence.go).
	Users          []string
	dbUsers        map[string]dbUser
	brokerUser     string
	brokerUsersVia broker.Users
	ownBroker      string // the broker URL with the program's own login
	clock          dbClock
	ev             *evidence
	mysqlNode      *dbnode.Node // the run's own MySQL server (ownServer)
	unproven       string       // why the verdict cannot stand (Summary.Unproven)
	probe          *sql.DB      // looks for an acked message's effect (probeAck); no default database, so cut-mysql never picks it
	// OnSetup, when set, is told the program's logins once they exist,
	// before it starts.
	OnSetup func(users []string)
}

// New prepares a run: the options checked, and the restart-broker faults
// left out (with the reason in Notes) where the lab cannot start a node of
// its own. Nothing is started yet.
func New(cfg services.Config, o Options, hist *History, workers *worker.Group) (*Run, error) {
	o.Defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Binary == "" {
		return nil, errors.New("chaos: no binary to start the workers with")
	}
	if hist == nil {
		hist = NewHistory(nil)
	}
	if workers == nil {
		workers = &worker.Group{}
	}
	r := &Run{O: o, Hist: hist, Workers: workers, faultsBy: map[FaultKind]int{}, own: map[string]*ownMember{}}
	if o.Own != nil {
		hist.Keep()
		r.ev = newEvidence()
	}
	if slices.Contains(o.Faults, RestartBroker) {
		if _, err := node.Server(); err != nil {
			r.O.Faults = slices.DeleteFunc(slices.Clone(o.Faults), func(k FaultKind) bool { return k == RestartBroker })
			r.Notes = append(r.Notes, "restart-broker left out: the lab cannot start a broker node of its own here ("+err.Error()+"), and it never restarts one it did not start")
		}
	}
	r.Plan = Schedule(r.O)
	cfg.Namespace = o.Namespace
	r.cfg = cfg
	r.names = services.Names{NS: o.Namespace}
	return r, nil
}

// Execute runs the schedule, lets everything drain and checks the result.
// When ctx ends (Ctrl-C) it stops at once; either way every process it
// started, the proxy and its broker node are gone when it returns.
func (r *Run) Execute(ctx context.Context) (*Summary, error) {
	defer r.close()
	h := r.Hist
	h.SetPhase("setup")
	if err := r.setup(ctx); err != nil {
		return nil, err
	}
	h.Begin()
	if r.O.Own != nil && r.O.Own.Role == "consumer" {
		pctx, stopPoll := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); r.pollApplied(pctx) }()
		defer func() { stopPoll(); <-done }()
	}
	h.SetPhase("schedule")
	began := time.Now()
	r.schedule(ctx)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("chaos run interrupted %.1fs into the schedule: %w", time.Since(began).Seconds(), ctx.Err())
	}
	h.SetPhase("drain")
	drainStart := time.Now()
	didDrain := r.drain(ctx)
	drained := time.Since(drainStart)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("chaos run interrupted while draining: %w", ctx.Err())
	}
	h.SetPhase("check")
	restarts := r.sup.restartsBy()
	r.sup.shutdown(3 * time.Second)
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	s, err := r.check(c)
	if err != nil {
		return nil, err
	}
	s.Restarts = restarts
	if r.O.Own != nil {
		s.Users = r.Users
		if err := r.dropUsers(); err != nil {
			s.Notes = append(s.Notes, "left behind: "+err.Error()+" (lab clean removes it)")
		} else if len(r.Users) > 0 {
			s.Notes = append(s.Notes, "your program's logins are removed")
		}
	}
	if !didDrain {
		// Judged as it was, a pipeline still moving proves nothing either way.
		v := fmt.Sprintf("drain: the pipeline had not drained %s after the schedule (--quiet); what was counted may still change", r.O.Quiet)
		if r.stalled {
			v = "drain: nothing moved for 6s after the schedule, with events unsent or messages in the queue"
		}
		s.Violations = append(s.Violations, v)
	}
	s.Elapsed = time.Since(began).Round(time.Millisecond).String()
	s.Drain = drained.Round(time.Millisecond).String()
	s.OrdersPerSecond = float64(s.Committed) / time.Since(began).Seconds()
	h.SetPhase("done")
	s.Timeline = h.Timeline()
	return s, h.Flush()
}

func (r *Run) setup(ctx context.Context) error {
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if r.O.Own != nil {
		r.ownServer(c)
	}
	server, err := services.Open(c, r.cfg.MySQL, "")
	if err != nil {
		return err
	}
	server.SetMaxOpenConns(4)
	r.server = server
	r.broker = r.cfg.AMQP
	if slices.Contains(r.O.Faults, RestartBroker) {
		_, boxed, _ := services.OwnNodes(c, r.cfg) // as a lesson's nodes are
		set, err := node.Start(c, node.Options{Namespace: r.O.Namespace, Nodes: 1, Containers: boxed})
		if err != nil {
			return fmt.Errorf("start a broker node of the lab's own for restart-broker: %w (leave restart-broker out of --faults to run on %s)", err, r.cfg.From("amqp"))
		}
		r.nodes = set
		r.broker = set.Nodes()[0].URL()
		r.version = "RabbitMQ " + set.Version + " (a node of the lab's own)"
		r.Hist.Event("chaos", "broker", r.version)
	}
	if err := prepare(c, server, r.broker, r.names, r.O.Orders); err != nil {
		return err
	}
	if r.O.Own != nil {
		if err := r.startBalances(c, server); err != nil {
			return err
		}
		if err := installAudit(c, server, r.names, r.O); err != nil {
			return err
		}
	}
	// A fresh pool: the schema's USE left the prepare's sessions on the
	// databases whose sessions cut-mysql picks from, and the run's own
	// must never be among them.
	server.Close()
	if server, err = services.Open(c, r.cfg.MySQL, ""); err != nil {
		return err
	}
	server.SetMaxOpenConns(4)
	r.server = server
	if r.O.Own != nil {
		if r.clock, err = measureClock(c, r); err != nil {
			return err
		}
		if r.probe, err = services.Open(c, r.cfg.MySQL, ""); err != nil {
			return err
		}
		r.probe.SetMaxOpenConns(4)
		if err := r.makeDBUsers(c, r.Copies()); err != nil {
			return err
		}
		if err := r.makeBrokerUser(c); err != nil {
			return err
		}
		if r.OnSetup != nil {
			r.OnSetup(r.Users)
		}
	}
	if r.O.SMS {
		if r.sms, err = startSMS(r.Hist, r.ev); err != nil {
			return err
		}
	}
	addr, err := services.AMQPAddr(r.broker)
	if err != nil {
		return err
	}
	proxy, err := amqpproxy.New("127.0.0.1:0", addr)
	if err != nil {
		return err
	}
	r.proxy = proxy
	through, err := relay.BrokerURL(r.broker, proxy.Addr())
	if err != nil {
		return err
	}
	env := append(r.cfg.Env(), "LAB_AMQP_URL="+through)
	r.sup = newSupervisor(r.O.Binary, env, r.Hist, r.Workers)
	p := r.O.Pipeline
	own := func(role string) bool { return r.O.Own != nil && r.O.Own.Role == role }
	for i := 1; i <= r.O.Consumers; i++ {
		if own("consumer") {
			if err := r.addOwn(c, name("consumer", i)); err != nil {
				return err
			}
			continue
		}
		args := append(slices.Clone(p.Consumer), "--queue", QueueName, "--prefetch", "10")
		if err := r.sup.add(name("consumer", i), "consumer", false, args...); err != nil {
			return err
		}
	}
	for i := 1; i <= r.O.Relays; i++ {
		if own("relay") {
			if err := r.addOwn(c, name("relay", i)); err != nil {
				return err
			}
			continue
		}
		args := append([]string{"--quiet", "--batch", "5", "--lease", strconv.Itoa(r.O.Lease), "--scan-delay", "1", "--backoff", "1",
			"--max-attempts", "1000", "--confirm-timeout", "1s", "--routing-key", QueueName}, p.Relay...)
		if err := r.sup.add(name("relay", i), "relay", false, args...); err != nil {
			return err
		}
	}
	rate := float64(r.O.Orders) / r.O.Duration.Seconds()
	args := []string{"--place", strconv.Itoa(r.O.Orders), "--from", "1", "--rate", strconv.FormatFloat(rate, 'f', 3, 64)}
	if r.O.Resend > 0 {
		args = append(args, "--resend-every", strconv.Itoa(r.O.Resend))
	}
	if r.O.Conflict > 0 {
		args = append(args, "--conflict-every", strconv.Itoa(r.O.Conflict), "--conflict-amount", strconv.Itoa(ConflictAmount))
	}
	if r.O.Order {
		args = append(args, "--order-events")
	}
	return r.sup.add("producer", "producer", true, args...)
}

// schedule injects the planned faults at their times. Each fault runs on
// its own, so one that waits (a kill armed at a point, a pause past the
// lease, a broker restart) does not hold back the next.
func (r *Run) schedule(ctx context.Context) {
	start := time.Now()
	var wg sync.WaitGroup
	for i, f := range r.Plan {
		t := time.NewTimer(time.Until(start.Add(f.At)))
		select {
		case <-ctx.Done():
			t.Stop()
			wg.Wait()
			return
		case <-t.C:
		}
		r.faultsBy[f.Kind]++
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := r.Hist.Fault(f)
			r.Hist.FaultResult(k, r.inject(ctx, i, f))
		}()
	}
	t := time.NewTimer(time.Until(start.Add(r.O.Duration)))
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	t.Stop()
	wg.Wait()
}

// inject applies one fault and says what it found.
func (r *Run) inject(ctx context.Context, i int, f Fault) string {
	if r.O.Own != nil {
		if res, ok := r.injectOwn(ctx, i, f); ok {
			return res
		}
	}
	switch f.Kind {
	case KillRelay, KillConsumer, KillProducer:
		return r.kill(ctx, f)
	case PauseRelay:
		return r.pause(ctx, f)
	case DropConfirm:
		r.proxy.DropNextConfirms(1)
		return sayDroppedConfirm.F()
	case CutAMQP:
		m := amqpproxy.Match{Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassBasic, Method: amqpproxy.MethodBasicPublish}
		what := "basic.publish"
		if f.Target == "consumers" {
			m.Method, what = amqpproxy.MethodBasicAck, "basic.ack"
		}
		r.proxy.CutAfter(m)
		return sayCutNext.F(what)
	case RestartBroker:
		return r.restartBroker(ctx)
	case CutMySQL:
		return r.cutMySQL(ctx, i, f)
	case SMSTimeout, SMSError:
		if r.sms == nil {
			return sayNoSMS.F()
		}
		return r.sms.inject(f.Kind)
	}
	return "unknown fault"
}

// armWait is how long a kill or pause armed at a point waits for it.
const armWait = 3 * time.Second

func (r *Run) kill(ctx context.Context, f Fault) string {
	m := r.sup.get(f.Target)
	if m == nil {
		return sayNoProcess.F()
	}
	p := m.current()
	if p == nil {
		if m.finished() {
			return sayFinished.F()
		}
		return sayRestarting.F()
	}
	if f.Point == "" {
		st := p.Status()
		p.Kill()
		return sayKilledAt.F(st.PID, orNone(st.Point))
	}
	if err := p.Arm(f.Point); err != nil {
		return sayNotRunning.F(err.Error())
	}
	c, cancel := context.WithTimeout(ctx, armWait)
	defer cancel()
	if err := p.WaitPaused(c, f.Point); err != nil {
		st := p.Status()
		if st.State == worker.Exited || st.State == worker.Killed {
			return sayDiedBefore.F(f.Point)
		}
		p.Kill()
		return sayKilledWhere.F(f.Point, armWait, st.PID, orNone(st.Point))
	}
	pid := p.PID()
	p.Kill()
	return sayKilledPaused.F(pid, f.Point)
}

func (r *Run) pause(ctx context.Context, f Fault) string {
	m := r.sup.get(f.Target)
	p := m.current()
	if p == nil {
		return sayRestarting.F()
	}
	if err := p.Arm(f.Point); err != nil {
		return sayNotRunning.F(err.Error())
	}
	c, cancel := context.WithTimeout(ctx, armWait)
	defer cancel()
	if err := p.WaitPaused(c, f.Point); err != nil {
		return sayNotPaused.F(f.Point, armWait)
	}
	hold := time.Duration(r.O.Lease)*time.Second + 1500*time.Millisecond
	select {
	case <-ctx.Done():
	case <-time.After(hold):
	}
	if err := p.Continue(); err != nil {
		return sayNotResumed.F(f.Point, err)
	}
	return sayResumed.F(f.Point, hold, r.O.Lease)
}

func (r *Run) restartBroker(ctx context.Context) string {
	if r.nodes == nil {
		return sayNoOwnNode.F()
	}
	// A node takes 5–20 s to come back; a second restart meanwhile would
	// kill it while it boots.
	if !r.brokerMu.TryLock() {
		return sayStillComing.F()
	}
	defer r.brokerMu.Unlock()
	began := time.Now()
	if err := r.nodes.Kill(1); err != nil {
		return "kill: " + err.Error()
	}
	select {
	case <-ctx.Done():
		return sayInterruptedDown.F()
	case <-time.After(500 * time.Millisecond):
	}
	c, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := r.nodes.Restart(c, 1); err != nil {
		return sayRestartFailed.F(err.Error())
	}
	return sayBrokerBack.F(time.Since(began).Seconds())
}

// cutMySQL kills one of the workers' sessions on the target database; the
// one is chosen by the seed among those open at that moment.
func (r *Run) cutMySQL(ctx context.Context, i int, f Fault) string {
	db := r.names.Name(services.OutboxDB)
	if f.Target == "idempotency" {
		db = r.names.Name(services.IdempotencyDB)
	}
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ids, err := r.sessions(c, "DB", db)
	if err != nil {
		return "cannot list the sessions: " + err.Error()
	}
	if len(ids) == 0 {
		return sayNoSession.F(db)
	}
	rng := rand.New(rand.NewPCG(r.O.Seed, uint64(i)))
	id := ids[rng.IntN(len(ids))]
	if _, err := r.server.ExecContext(c, fmt.Sprintf("KILL CONNECTION %d", id)); err != nil {
		return fmt.Sprintf("KILL CONNECTION %d: %v", id, err)
	}
	return sayKillConn.F(id, len(ids), db)
}

// sessions are the ids of the server's sessions whose PROCESSLIST column
// (DB or USER) is value, in order.
func (r *Run) sessions(ctx context.Context, column, value string) ([]int64, error) {
	rows, err := r.server.QueryContext(ctx, "SELECT ID FROM information_schema.PROCESSLIST WHERE "+column+" = ? ORDER BY ID", value)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	return ids, rows.Err()
}

// drain waits until the producer has placed every order, the outbox has
// nothing due or claimed, the queue is empty and no consumer has handled
// anything for 2 s; or until o.Quiet.
func (r *Run) drain(ctx context.Context) bool {
	deadline := time.Now().Add(r.O.Quiet)
	outbox := r.names.Name(services.OutboxDB)
	queue := r.names.Name(QueueName)
	// A program of its own may be stuck for good (an event SENDING for
	// ever): when nothing has moved for stuckAfter, waiting longer tells
	// nothing more.
	const stuckAfter = 6 * time.Second
	type state struct{ pending, depth int }
	var seen state
	var since time.Time
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(500 * time.Millisecond):
		}
		if m := r.sup.get("producer"); m != nil && !m.finished() {
			continue
		}
		c, cancel := context.WithTimeout(ctx, 3*time.Second)
		var pending int
		err := r.server.QueryRowContext(c, "SELECT COUNT(*) FROM "+outbox+".outbox_event WHERE status IN ('NEW','SENDING')").Scan(&pending)
		cancel()
		depth := queueDepth(ctx, r.broker, queue)
		if now := (state{pending, depth}); r.O.Own != nil && err == nil {
			if now != seen || since.IsZero() {
				seen, since = now, time.Now()
			} else if time.Since(since) >= stuckAfter && r.Hist.idleFor() >= stuckAfter {
				r.Notes = append(r.Notes, fmt.Sprintf("nothing moved for %s after the schedule (%d events NEW or SENDING, %d messages in the queue); checked as it was", stuckAfter, pending, depth))
				r.stalled = true
				return false
			}
		}
		if err != nil || pending > 0 || depth != 0 {
			continue
		}
		if r.Hist.idleFor() >= 2*time.Second {
			return true
		}
	}
	r.Notes = append(r.Notes, fmt.Sprintf("the pipeline had not drained %s after the schedule; checked as it was", r.O.Quiet))
	return false
}

func (r *Run) close() {
	if r.sup != nil {
		r.sup.shutdown(3 * time.Second)
	}
	if r.proxy != nil {
		r.proxy.Close()
	}
	for _, m := range r.own {
		m.proxy.Close()
	}
	if err := r.dropUsers(); err != nil {
		r.Notes = append(r.Notes, "left behind: "+err.Error()+" (lab clean removes it)")
	}
	r.sms.close()
	if r.nodes != nil {
		r.nodes.Close()
	}
	if r.server != nil {
		r.server.Close()
	}
	if r.probe != nil {
		r.probe.Close()
	}
	if r.mysqlNode != nil {
		r.mysqlNode.Stop()
	}
	r.Hist.Flush()
}

// ownServer puts a run that grades a program of the learner's on a MySQL
// server of the lab's own, made for the run, whose root password only the
// lab holds (its workers get it over a pipe): the program runs as the
// learner's system user, which on most machines reaches the configured
// server's administrator (root with no password), and with it could
// rewrite the evidence it is graded on. Where no such server can start,
// the run goes on where it was asked to, and its verdict is unproven.
func (r *Run) ownServer(ctx context.Context) {
	if r.O.SharedServer {
		r.unproven = "the run's evidence was kept on " + r.cfg.MySQLAddr() + " (--shared-server), where any administrator's login of that server could have rewritten it"
		return
	}
	n, err := dbnode.Start(ctx)
	if err != nil {
		r.unproven = fmt.Sprintf("the lab could not start a MySQL server of its own for this run (%v), so the evidence was kept on %s, where any administrator's login of that server "+
			"(root with no password, on most machines) could have rewritten it: install mariadb-server or mysql-server (or set LAB_MYSQLD) for a verdict", err, r.cfg.MySQLAddr())
		return
	}
	r.mysqlNode = n
	r.cfg.MySQL = n.DSN()
	secret.Note(secret.KindDSN, r.cfg.MySQL)
	r.Notes = append(r.Notes, fmt.Sprintf("MySQL: a server of the lab's own for this run, %s %s at %s, whose administrator's password only the lab holds: the evidence your program is graded on is out of its reach",
		n.Flavor, strings.SplitN(n.Version, "-", 2)[0], n.Addr()))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Package labtest is the test harness every package of the lab uses to meet
// the real MySQL/MariaDB, RabbitMQ and Redis: a namespace of its own for each
// test, kept apart from concurrent test processes and learners; what the
// test created there removed when it ends, failed or not, and what an
// earlier crashed run left removed before; the article's databases; the
// management-API requirement; the lab's binaries built once per process; and
// a missing service said in one line with how to start it.
//
// A package's tests run under it from TestMain:
//
//	func TestMain(m *testing.M) { labtest.Main(m) }
//
// and a test asks for what it needs:
//
//	env := labtest.Connect(t)                // the three services, namespace env.NS
//	name := env.Database(services.OutboxDB)  // blog_outbox_lab_NS from sql/
//	q := env.Queue("orders")                 // orders_NS, removed at the end
//	bin := labtest.Lab(t)                    // lab, lab-worker beside it
//
// TESTING.md at the repository's root says which package needs what, the
// variables the tests read, and how the namespaces are named.
package labtest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/services"
)

// process is this test process's state: its slot, a namespace-less
// connection for the sweeps, the namespaces handed out, the binaries.
var process struct {
	inMain atomic.Bool

	mu    sync.Mutex
	slot  *slot
	root  *services.Services // for the process's sweeps; nil until the first Connect
	next  int                // the last test number handed out
	dirty bool               // the slot's last holder died: clean each namespace before its test
	amqp  bool               // a test asked for RabbitMQ: list the broker at the end

	bins binaries
}

// Main runs the package's tests (m.Run) and then: removes what is left of
// every namespace this process handed out (and says so: a test that leaves
// something behind makes the run fail), releases the process's slot and
// deletes the binaries it built. It does not return.
func Main(m *testing.M) {
	process.inMain.Store(true)
	code := m.Run()
	reportNotRun(packageDir())
	services.StopOwnMySQL() // a lesson that read a binary log may have started one
	if !finish() && code == 0 {
		code = 1
	}
	leaveRoad()
	os.Exit(code)
}

// MainParallel is Main with -parallel n where the command line sets none:
// a package whose parallel tests are whole pipelines that mostly wait
// (go test's default, GOMAXPROCS, is 2 on a 2-core machine).
func MainParallel(m *testing.M, n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
	Main(m)
}

// finish is Main's end; false when this run left something on the servers.
func finish() bool {
	ok := true
	process.mu.Lock()
	defer process.mu.Unlock()
	if process.slot != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		root := process.root
		if !process.amqp {
			root = only(root, MySQL|Redis) // no test of this run used the broker
		}
		sc := &scope{svc: root, ns: process.slot.prefix, digit: true, rabbitmqctl: true}
		found, err := sc.leftovers(ctx)
		if err != nil {
			fmt.Fprintf(os.Stderr, "labtest: looking for what this run left: %v\n", err)
		}
		if len(found) > 0 {
			ok = false
			fmt.Fprintf(os.Stderr, "labtest: this run's tests left on the servers: %s\n", strings.Join(found, ", "))
			var report bytes.Buffer
			if left, err := sc.clean(ctx, &report); len(left) > 0 || err != nil {
				fmt.Fprintf(os.Stderr, "labtest: and could not remove %s: %v\n", strings.Join(left, ", "), err)
			} else {
				fmt.Fprintln(os.Stderr, "labtest: removed them now")
			}
		}
		cancel()
		process.slot.release(ok)
		process.root.Close()
		process.slot, process.root = nil, nil
	}
	return ok
}

func mustMain(t testing.TB) {
	t.Helper()
	if !process.inMain.Load() {
		t.Fatal("labtest: the package's tests must run under labtest: add `func TestMain(m *testing.M) { labtest.Main(m) }`")
	}
}

// start takes this process's slot on its first call, and removes what an
// earlier process that held the slot and died left on the servers.
func start(t testing.TB) string {
	t.Helper()
	process.mu.Lock()
	defer process.mu.Unlock()
	if process.slot != nil {
		return process.slot.prefix
	}
	p, err := prefix()
	if err != nil {
		t.Fatal(err)
	}
	s, orphans, err := takeSlot(p + packageTag(MaxNamespace-len(p)-4))
	if err != nil {
		t.Fatal(err)
	}
	if err := takeRoad(); err != nil {
		s.release(false)
		for _, o := range orphans {
			o.release(false)
		}
		t.Fatal("labtest: the container road: " + oneLine(err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := services.Connect(ctx, services.Config{NoDocker: true}, false)
	if err != nil {
		s.release(false)
		for _, o := range orphans {
			o.release(false)
		}
		t.Fatal("labtest: " + oneLine(err)) // a malformed LAB_* value
	}
	process.slot, process.root, process.dirty = s, root, s.dirty
	// What earlier runs left: of this slot, its databases and keys always
	// (cheap), its queues and exchanges when the broker can list them and
	// that run did not end cleanly; all of it for the slots whose process
	// died and nobody holds now.
	for _, o := range append([]*slot{s}, orphans...) {
		sc := &scope{svc: root, ns: o.prefix, digit: true, rabbitmqctl: o.dirty}
		found, _ := sc.leftovers(ctx)
		left, err := []string(nil), error(nil)
		if len(found) > 0 {
			left, err = sc.clean(ctx, &bytes.Buffer{})
			fmt.Fprintf(os.Stderr, "labtest: removed what an earlier run of %s left: %s\n", o.prefix, strings.Join(found, ", "))
		}
		if o != s {
			o.release(len(left) == 0 && err == nil)
		}
		if len(left) > 0 || err != nil {
			t.Fatalf("labtest: an earlier run of %s left %s, which cannot be removed: %v", o.prefix, strings.Join(left, ", "), err)
		}
	}
	return s.prefix
}

// nextNamespace hands out the next test namespace: PREFIX+TAG+SLOT+NNN.
func nextNamespace(t testing.TB) string {
	t.Helper()
	p := start(t)
	process.mu.Lock()
	process.next++
	n := process.next
	process.mu.Unlock()
	if n > 999 {
		t.Fatal("labtest: more than 999 test namespaces in one process")
	}
	ns := fmt.Sprintf("%s%03d", p, n)
	if why := services.NamespaceProblem(ns); why != "" || len(ns) > MaxNamespace {
		t.Fatalf("labtest: namespace %q cannot be used: %s", ns, why)
	}
	return ns
}

// Env is one test's services, in a namespace of its own (NS).
type Env struct {
	T   testing.TB
	Svc *services.Services
	NS  string

	mu     sync.Mutex
	scope  scope
	report *bytes.Buffer // what the lab's cleaners said
}

// byTest is each running test's Env made by Of.
var byTest sync.Map // testing.TB → *Env

// Of is the test's Env: Connect on its first call, the same Env after, so
// each of a test's helpers can ask for it.
func Of(t testing.TB, need ...Service) *Env {
	t.Helper()
	if e, ok := byTest.Load(t); ok {
		return e.(*Env)
	}
	e := Connect(t, need...)
	byTest.Store(t, e)
	t.Cleanup(func() { byTest.Delete(t) })
	return e
}

// Connect reaches the services a test needs (all three when none is named)
// in a namespace of its own, and removes what the test created there when it
// ends, whether it passed or not: the cleanup runs after every cleanup the
// test registers later (its workers, pools and servers are gone by then),
// and the test fails on anything it could not remove. A service that does
// not answer fails the test with one line saying what was tried and how to
// start it. The addresses come from LAB_MYSQL_DSN, LAB_AMQP_URL,
// LAB_REDIS_ADDR and LAB_MANAGEMENT_URL, else the local defaults, as the lab
// reads them (services.Config.FromEnv).
func Connect(t testing.TB, need ...Service) *Env {
	t.Helper()
	mustMain(t)
	want := Service(0)
	for _, n := range need {
		want |= n
	}
	if want == 0 {
		want = All
	}
	ns := nextNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	svc, err := services.Connect(ctx, services.Config{Namespace: ns, NoDocker: true}, false)
	if err != nil {
		t.Fatal("labtest: " + oneLine(err)) // a malformed LAB_* value
	}
	if lines := missing(svc, want); len(lines) > 0 {
		svc.Close()
		t.Fatal(strings.Join(lines, "\n"))
	}
	// The cleanup looks only at the services the test asked for.
	e := &Env{T: t, Svc: svc, NS: ns, scope: scope{svc: only(svc, want), ns: ns, spaces: []string{ns}}, report: &bytes.Buffer{}}
	process.mu.Lock()
	dirty := process.dirty
	process.amqp = process.amqp || want&RabbitMQ != 0
	process.mu.Unlock()
	if dirty {
		// The last run of this slot died: this very namespace may hold
		// what one of its tests made, which no list found.
		if left, err := e.clean(ctx); len(left) > 0 || err != nil {
			t.Fatalf("labtest: namespace %s holds what an earlier run left, which cannot be removed: %s %v", ns, strings.Join(left, ", "), err)
		}
	}
	t.Cleanup(e.cleanup)
	return e
}

// clean removes everything of the test's namespace family and lists what
// it could not.
func (e *Env) clean(ctx context.Context) ([]string, error) {
	e.mu.Lock()
	sc := e.scope
	sc.spaces = append([]string(nil), e.scope.spaces...)
	sc.queues = append([]string(nil), e.scope.queues...)
	sc.exchanges = append([]string(nil), e.scope.exchanges...)
	e.mu.Unlock()
	left, err := sc.clean(ctx, e.report)
	if len(left) > 0 || err != nil {
		e.T.Logf("labtest: the lab's cleaner on namespace %s said:\n%s", e.NS, e.report.String())
	}
	return left, err
}

func (e *Env) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	left, err := e.clean(ctx)
	for _, cl := range e.scope.cleaners {
		cl.Close()
	}
	if err != nil {
		e.T.Errorf("labtest: cleaning namespace %s: %v", e.NS, err)
	}
	if len(left) > 0 {
		e.T.Errorf("labtest: left on the servers after cleaning namespace %s: %s", e.NS, strings.Join(left, ", "))
	}
	e.Svc.Close()
}

// notAsked stands for a service the test did not ask for, in the
// cleanup's view of the services: the lab's cleaner and the sweep leave it.
var notAsked = errors.New("labtest: not asked for by the test")

// only is svc (sharing its connections) with the services not in want
// marked as not there.
func only(svc *services.Services, want Service) *services.Services {
	c := svc.For(svc.Config.Namespace)
	if want&MySQL == 0 {
		c.Info.MySQLErr = notAsked
	}
	if want&RabbitMQ == 0 {
		c.Info.AMQPErr = notAsked
	}
	if want&Redis == 0 {
		c.Info.RedisErr = notAsked
	}
	return c
}

// Config is the test's service configuration (addresses, namespace).
func (e *Env) Config() services.Config { return e.Svc.Config }

// Name is an article's database, queue or exchange name in the test's
// namespace: orders → orders_NS.
func (e *Env) Name(article string) string { return e.Svc.Names.Name(article) }

// Queue is Name for a queue the test (or a lesson it runs) creates, which
// the cleanup then removes and checks, with or without the management API.
func (e *Env) Queue(article string) string { return e.Track("queue", e.Name(article)) }

// Exchange is Queue for an exchange.
func (e *Env) Exchange(article string) string { return e.Track("exchange", e.Name(article)) }

// Track tells the cleanup about a queue or exchange ("queue", "exchange")
// of the test's namespace family by its real name (one a Derived or Lane
// namespace carries, say), and returns the name.
func (e *Env) Track(kind, name string) string {
	e.T.Helper()
	if !inFamily(name, e.NS, false) {
		e.T.Fatalf("labtest: %s %s is not in namespace %s or one derived from it", kind, name, e.NS)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch kind {
	case "queue":
		e.scope.queues = append(e.scope.queues, name)
	case "exchange":
		e.scope.exchanges = append(e.scope.exchanges, name)
	default:
		e.T.Fatalf("labtest: Track(%q): want queue or exchange", kind)
	}
	return name
}

// Derived is another namespace of the test's: NS+suffix (a workshop
// participant, a room, the bench's). It must be a namespace a learner can
// have or a replay lane's; the cleanup covers it.
func (e *Env) Derived(suffix string) string {
	e.T.Helper()
	ns := e.NS + suffix
	if !services.ValidNamespace(ns) && !services.IsLaneNamespace(ns) {
		e.T.Fatalf("labtest: derived namespace %q: %s", ns, services.NamespaceProblem(ns))
	}
	e.mu.Lock()
	e.scope.spaces = append(e.scope.spaces, ns)
	e.mu.Unlock()
	return ns
}

// Lane is the services under the namespace of replay lane i (NS_r(i+1)),
// as Services.Lane gives it, with the lane covered by the cleanup.
func (e *Env) Lane(i int) *services.Services {
	l := e.Svc.Lane(i)
	e.mu.Lock()
	e.scope.spaces = append(e.scope.spaces, l.Names.NS)
	e.mu.Unlock()
	return l
}

// Lessons adds a cleaner for the queues and exchanges names lists (an
// instructor's lessons folder's: labs.BrokerNames(dir)) to the test's
// cleanup, besides the built-in lessons'. Read the folder now: it may be
// gone by the time the cleanup runs.
func (e *Env) Lessons(names cleaner.Names) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := cleaner.New(ctx, e.scope.svc, names, e.report)
	e.mu.Lock()
	e.scope.cleaners = append(e.scope.cleaners, cl)
	e.mu.Unlock()
}

// Database creates one of the article's databases (services.IdempotencyDB,
// services.OutboxDB) in the test's namespace from sql/, with the extra
// sql/ files after the schema, marked as the lab's (services.Recreate), and
// returns its name.
func (e *Env) Database(article string, extra ...string) string {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, err := services.Recreate(ctx, e.Svc.MySQL, e.Svc.Names, article, extra...)
	if err != nil {
		e.T.Fatalf("labtest: create %s: %v", e.Name(article), err)
	}
	return name
}

// Open is a pool on database name ("" for none) of the test's MySQL server,
// closed when the test ends (before the namespace's cleanup).
func (e *Env) Open(name string) *sql.DB {
	e.T.Helper()
	db, err := services.Open(context.Background(), e.Svc.Config.MySQL, name)
	if err != nil {
		e.T.Fatalf("labtest: open %s: %v", name, err)
	}
	e.T.Cleanup(func() { db.Close() })
	return db
}

// ManagementEnv makes a missing management API a failure instead of a skip.
const ManagementEnv = "LAB_REQUIRE_MANAGEMENT"

// RequireManagement skips the test when RabbitMQ's management API does not
// answer, or fails it when LAB_REQUIRE_MANAGEMENT=1 (CI's RabbitMQ 4.x node
// has the plugin on, and there its absence is a fault).
func (e *Env) RequireManagement() {
	e.T.Helper()
	if e.Svc.Info.Management {
		return
	}
	if os.Getenv(ManagementEnv) == "1" {
		e.T.Fatalf("labtest: the management API must answer here (%s=1): %s", ManagementEnv, e.Svc.Info.ManagementNote)
	}
	e.T.Skipf("labtest: no management API (%s); %s=1 makes this a failure (CI's RabbitMQ 4.x node has one)", e.Svc.Info.ManagementNote, ManagementEnv)
}

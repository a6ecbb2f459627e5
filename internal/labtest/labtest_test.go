package labtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
)

func TestMain(m *testing.M) { Main(m) }

// made is what a test put on the servers, each checked on its own (not
// through the harness's lists).
type made struct {
	dbs, queues, exchanges, keys []string
}

// makeThings puts one of everything a test can leave in env's namespace
// family: the article's database (marked), a same-named database the lab
// did not mark, a room's database, a lane's and a derived namespace's
// databases, a marked and an unmarked queue, an exchange, Redis keys in
// both of the lab's key shapes and a lane's.
func makeThings(t *testing.T, env *Env) made {
	t.Helper()
	ctx := context.Background()
	var m made
	m.dbs = append(m.dbs, env.Database(services.IdempotencyDB))
	foreign := env.Name(services.OutboxDB)
	if _, err := env.Svc.MySQL.ExecContext(ctx, "CREATE DATABASE `"+foreign+"`"); err != nil {
		t.Fatal(err)
	}
	m.dbs = append(m.dbs, foreign)
	rm, err := room.Open(ctx, env.Svc.MySQL, env.Svc.Config.MySQL, env.NS, "labtest")
	if err != nil {
		t.Fatal(err)
	}
	rm.Close()
	m.dbs = append(m.dbs, room.DBName(env.NS))
	lane := env.Lane(0)
	bench := env.Svc.For(env.Derived("bench"))
	for _, names := range []services.Names{lane.Names, bench.Names} {
		name, err := services.Recreate(ctx, env.Svc.MySQL, names, services.OutboxDB)
		if err != nil {
			t.Fatal(err)
		}
		m.dbs = append(m.dbs, name)
	}

	conn, err := services.DialAMQP(ctx, env.Svc.Config.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	marked, plain, x := env.Queue("orders"), env.Queue("labtest.plain"), env.Exchange("labtest.x")
	if err := broker.DeclareQueue(ch, broker.Queue{Name: marked, Durable: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(plain, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := broker.DeclareExchange(ch, broker.Exchange{Name: x, Type: "fanout", Durable: true}); err != nil {
		t.Fatal(err)
	}
	m.queues = []string{marked, plain}
	m.exchanges = []string{x, broker.MarkOf("queue", marked), broker.MarkOf("exchange", x)}

	m.keys = []string{env.Svc.Names.RedisKey("lab:labtest:k"), env.Svc.Names.RedisKey("plain"), lane.Names.RedisKey("lab:k")}
	for _, k := range m.keys {
		if err := env.Svc.Redis.Set(ctx, k, "1", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// present lists which of m exist, looking each up directly.
func present(t *testing.T, svc *services.Services, m made) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, db := range m.dbs {
		var n int
		if err := svc.MySQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", db).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			out = append(out, "database "+db)
		}
	}
	c := broker.NewClient(svc.Config.AMQP)
	defer c.Close()
	for kind, names := range map[string][]string{"queue": m.queues, "exchange": m.exchanges} {
		for _, n := range names {
			ok, err := exists(ctx, c, kind, n)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				out = append(out, kind+" "+n)
			}
		}
	}
	for _, k := range m.keys {
		if n, _ := svc.Redis.Exists(ctx, k).Result(); n > 0 {
			out = append(out, "Redis key "+k)
		}
	}
	slices.Sort(out)
	return out
}

func all(m made) int { return len(m.dbs) + len(m.queues) + len(m.exchanges) + len(m.keys) }

// TestTheCleanupRemovesEverythingATestMadeInItsNamespace: one of every kind
// of thing a test makes, marked by the lab or not, in its namespace, its
// lane's and a derived one; the cleanup removes them all and its check
// then finds nothing.
func TestTheCleanupRemovesEverythingATestMadeInItsNamespace(t *testing.T) {
	env := Connect(t)
	m := makeThings(t, env)
	if got := present(t, env.Svc, m); len(got) != all(m) {
		t.Fatalf("made %d things, %d are there: %v", all(m), len(got), got)
	}
	start := time.Now()
	left, err := env.clean(context.Background())
	t.Logf("cleanup of namespace %s took %s", env.NS, time.Since(start).Round(time.Millisecond))
	if err != nil || len(left) > 0 {
		t.Fatalf("the cleanup left %v (%v)", left, err)
	}
	if got := present(t, env.Svc, m); len(got) > 0 {
		t.Fatalf("after the cleanup these are still there: %v", got)
	}
}

// TestTheCheckNamesEverythingLeftBehind: the check that follows the cleanup
// lists each thing of the namespace family that still exists, and only
// those: before any cleanup it names every one of them.
func TestTheCheckNamesEverythingLeftBehind(t *testing.T) {
	env := Connect(t)
	m := makeThings(t, env)
	sc := env.scope
	left, err := sc.leftovers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for kind, names := range map[string][]string{"database": m.dbs, "queue": m.queues, "exchange": m.exchanges, "Redis key": m.keys} {
		for _, n := range names {
			want = append(want, kind+" "+n)
		}
	}
	slices.Sort(want)
	slices.Sort(left)
	if !slices.Equal(left, want) {
		t.Fatalf("the check lists\n  %v\nwant\n  %v", left, want)
	}
}

// recorder stands in for a test: it keeps what the harness reports and the
// cleanups it registers, so a failing cleanup can be watched from a test
// that passes.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Cleanup(f func())    { r.cleanups = append(r.cleanups, f) }
func (r *recorder) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestACleanupThatCannotRemoveSomethingFailsTheTestNamingIt: a queue another
// connection holds exclusively cannot be deleted by the cleanup; the test
// the harness cleans up after fails, naming the queue.
func TestACleanupThatCannotRemoveSomethingFailsTheTestNamingIt(t *testing.T) {
	rec := &recorder{TB: t}
	env := Connect(rec)
	locked := env.Queue("labtest.locked")
	conn, err := services.DialAMQP(context.Background(), env.Svc.Config.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	ch, _ := conn.Channel()
	if _, err := ch.QueueDeclare(locked, false, false, true, false, nil); err != nil { // exclusive to conn
		t.Fatal(err)
	}
	key := env.Svc.Names.RedisKey("lab:removable")
	env.Svc.Redis.Set(context.Background(), key, "1", time.Hour)
	rec.runCleanups()
	report := strings.Join(rec.errs, "\n")
	if !strings.Contains(report, "left on the servers after cleaning namespace "+env.NS+": queue "+locked) {
		t.Errorf("the failed test's report does not name the queue left behind:\n%s", report)
	}
	if strings.Contains(report, key) {
		t.Errorf("the report names a key the cleanup did remove:\n%s", report)
	}
	conn.Close() // the exclusive queue goes with its connection
	sc := env.scope
	sc.svc = Connect(t).Svc // env's connections are closed now
	if left, err := sc.leftovers(context.Background()); len(left) > 0 || err != nil {
		t.Fatalf("once its connection closed: %v %v", left, err)
	}
}

// TestTheNamespacesStayApartAndNameTheirPackage: every test of a process
// gets another namespace, all starting with the process's prefix, the
// package's name in it, fixed width so none is a prefix of another.
func TestTheNamespacesStayApartAndNameTheirPackage(t *testing.T) {
	a, b := Connect(t, MySQL), Connect(t, MySQL)
	p := process.slot.prefix
	for _, ns := range []string{a.NS, b.NS} {
		if !strings.HasPrefix(ns, p) || len(ns) != len(p)+3 || !services.ValidNamespace(ns) || len(ns) > MaxNamespace {
			t.Errorf("namespace %q: want %s and three digits, a valid namespace of at most %d characters", ns, p, MaxNamespace)
		}
	}
	if a.NS == b.NS || strings.HasPrefix(b.NS, a.NS) {
		t.Errorf("namespaces %s and %s", a.NS, b.NS)
	}
	// PREFIX, the package's name cut to what the namespace has room for
	// (none after a 7-character LAB_TEST_NAMESPACE), a slot letter.
	pfx, _ := prefix()
	tag := "labtest"[:min(len("labtest"), MaxNamespace-len(pfx)-4)]
	if len(p) != len(pfx)+len(tag)+1 || !strings.HasPrefix(p, pfx+tag) {
		t.Errorf("prefix %s: want %s, then %q (the package labtest, cut to fit), then a slot letter", p, pfx, tag)
	}
	for _, c := range []struct {
		name string
		in   bool
	}{
		{"blog_outbox_lab_" + a.NS, true}, {"blog_outbox_lab_" + a.NS + "_r2", true}, {"lab_" + a.NS + ":dedup:x", true},
		{a.NS + ":x", true}, {"lab.created-by-reliable-messaging-lab.queue.orders_" + a.NS, true},
		{"blog_outbox_lab_" + b.NS, false}, {"blog_outbox_lab_x" + a.NS, false}, {"orders__r1", false},
	} {
		if got := inFamily(c.name, a.NS, false); got != c.in {
			t.Errorf("inFamily(%q, %q) = %t", c.name, a.NS, got)
		}
	}
	if !inFamily("orders_"+a.NS, p, true) || inFamily("orders_"+p+"x001", p, true) {
		t.Error("the process family takes a test namespace and refuses another slot's")
	}
}

// TestAMissingServiceIsOneLineSayingWhatWasTriedAndHowToStartIt.
func TestAMissingServiceIsOneLineSayingWhatWasTriedAndHowToStartIt(t *testing.T) {
	_, refused := net.Dial("tcp", "127.0.0.1:1") // a real refusal, as the drivers meet it
	if refused == nil {
		t.Skip("something listens on port 1")
	}
	got := missingLine("MariaDB/MySQL", "127.0.0.1:3306", "root@tcp(127.0.0.1:3306)/", "default", "LAB_MYSQL_DSN", StartMySQL, "127.0.0.1:3306", false, refused)
	want := "labtest: MariaDB/MySQL does not answer at 127.0.0.1:3306 (root@tcp(127.0.0.1:3306)/: connect: connection refused): " + // one line

		"start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd, or set LAB_MYSQL_DSN"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Every service down, as Connect sees it: one line each, no password.
	svc, err := services.Connect(context.Background(), services.Config{MySQL: "root:hunter22@tcp(127.0.0.1:1)/",
		AMQP: "amqp://guest:hunter22@127.0.0.1:1/", Redis: "127.0.0.1:1", NoDocker: true}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	lines := missing(svc, All)
	for i, w := range []string{"MariaDB/MySQL does not answer at 127.0.0.1:1", "RabbitMQ does not answer at 127.0.0.1:1", "Redis does not answer at 127.0.0.1:1"} {
		if i >= len(lines) || !strings.HasPrefix(lines[i], "labtest: "+w) || strings.Contains(lines[i], "\n") || strings.Contains(lines[i], "hunter22") {
			t.Errorf("line %d: %q, want one line starting %q without the password", i, lines, w)
		}
	}
	for i, w := range []string{StartMySQL, StartRabbitMQ, StartRedis} {
		if i < len(lines) && !strings.Contains(lines[i], w) {
			t.Errorf("line %d lacks how to start it (%s): %s", i, w, lines[i])
		}
	}
	// An address the environment names is the environment's to fix.
	got = missingLine("RabbitMQ", "127.0.0.1:5673", "amqp://guest:xxxxx@127.0.0.1:5673/", "LAB_AMQP_URL", "LAB_AMQP_URL", StartRabbitMQ, "127.0.0.1:5672", false, refused)
	if !strings.Contains(got, "from LAB_AMQP_URL") || !strings.Contains(got, "unset LAB_AMQP_URL") {
		t.Errorf("an address from the environment: %s", got)
	}
}

// The child tests run only in a process TestACleanupRunsWhenTheTestFails...
// starts: they make things, say their names and then fail or die.
const childEnv = "LABTEST_CHILD"

func TestChild(t *testing.T) {
	how := os.Getenv(childEnv)
	if how == "" {
		t.Skip("runs as a child of the crash and failure tests")
	}
	env := Connect(t)
	switch how {
	case "connect":
		fmt.Printf("ns %s\n", env.NS)
		return
	case "hold": // until the parent closes stdin
		fmt.Printf("ns %s\n", env.NS)
		io.Copy(io.Discard, os.Stdin)
		return
	}
	m := makeThings(t, env)
	fmt.Printf("ns %s\n", env.NS)
	for kind, names := range map[string][]string{"db": m.dbs, "queue": m.queues, "exchange": m.exchanges, "key": m.keys} {
		fmt.Printf("%s %s\n", kind, strings.Join(names, " "))
	}
	os.Stdout.Sync()
	switch how {
	case "fail":
		t.Fatal("failing on purpose, after making things")
	case "crash":
		os.Exit(3) // no cleanup, no Main's end: as a timeout's panic or a SIGKILL
	}
}

// child runs TestChild in a process of its own and reads what it made.
func child(t *testing.T, how string, env ...string) (ns string, m made, out string, code int) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^TestChild$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), childEnv+"="+how), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		f := strings.Fields(rest)
		switch kind {
		case "ns":
			ns = rest
		case "db":
			m.dbs = f
		case "queue":
			m.queues = f
		case "exchange":
			m.exchanges = f
		case "key":
			m.keys = f
		}
	}
	return ns, m, string(b) + stderr.String(), cmd.ProcessState.ExitCode()
}

// TestACleanupRunsWhenTheTestFails: a test that made things and then failed
// leaves none of them.
func TestACleanupRunsWhenTheTestFails(t *testing.T) {
	env := Connect(t) // this process's slot: the child takes another
	ns, m, out, code := child(t, "fail")
	if code == 0 || !strings.Contains(out, "failing on purpose") || all(m) < 10 {
		t.Fatalf("the child: exit %d, made %d things\n%s", code, all(m), out)
	}
	if got := present(t, env.Svc, m); len(got) > 0 {
		t.Fatalf("namespace %s of a failed test still holds: %v", ns, got)
	}
}

// TestWhatACrashedRunLeftIsRemovedWhenItsSlotIsTakenAgain: a test process
// that dies before any cleanup (os.Exit in a test, as a -timeout panic
// would) leaves what it made; the next process that takes its slot removes
// it all before its first test runs.
func TestWhatACrashedRunLeftIsRemovedWhenItsSlotIsTakenAgain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("flock slots: Linux")
	}
	env := Connect(t)
	ns, m, out, code := child(t, "crash")
	if code != 3 || all(m) < 10 {
		t.Fatalf("the child: exit %d, made %d things\n%s", code, all(m), out)
	}
	t.Cleanup(func() { // whatever happens below, nothing of the crash stays
		sc := &scope{svc: env.Svc, ns: ns, spaces: []string{ns}, queues: m.queues, exchanges: m.exchanges}
		sc.clean(context.Background(), &bytes.Buffer{})
	})
	if got := present(t, env.Svc, m); len(got) != all(m) {
		t.Fatalf("the crashed child's things: %d of %d there (%v)", len(got), all(m), got)
	}
	ns2, _, out2, code2 := child(t, "connect")
	if code2 != 0 || ns2 != ns || !strings.Contains(out2, "removed what an earlier run of") {
		t.Fatalf("the next child: exit %d in namespace %q (the crashed one's was %s)\n%s", code2, ns2, ns, out2)
	}
	if got := present(t, env.Svc, m); len(got) > 0 {
		t.Fatalf("after the slot was taken again these are still there: %v\n%s", got, out2)
	}
}

// TestWithTheManagementAPIAQueueNobodyNamedIsFoundAndRemoved: where the
// management API answers (CI's RabbitMQ 4.x), the cleanup lists the broker
// and so finds a queue of the namespace the test never told it about; a
// fake API stands in for the plugin here, listing the real queue.
func TestWithTheManagementAPIAQueueNobodyNamedIsFoundAndRemoved(t *testing.T) {
	env := Connect(t, RabbitMQ)
	name := env.Name("labtest.unnamed") // not env.Queue: the harness is not told
	conn, err := services.DialAMQP(context.Background(), env.Svc.Config.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.EscapedPath(), "/api/queues/%2F"):
			fmt.Fprintf(w, `[{"name":%q},{"name":"someone-elses"}]`, name)
		case strings.HasPrefix(r.URL.EscapedPath(), "/api/exchanges/%2F"):
			fmt.Fprint(w, `[{"name":"amq.direct"},{"name":""}]`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	svc := env.Svc.For(env.NS)
	svc.Info.Management, svc.Config.Management = true, api.URL
	sc := &scope{svc: svc, ns: env.NS, spaces: []string{env.NS}}
	if q, x, how := sc.listBroker(context.Background()); how != "the management API" || len(q) != 2 || len(x) != 2 {
		t.Fatalf("listed %v %v through %q", q, x, how)
	}
	left, err := sc.leftovers(context.Background())
	if err != nil || !slices.Equal(left, []string{"queue " + name}) {
		t.Fatalf("the check lists %v (%v), want the unnamed queue alone", left, err)
	}
	if err := sc.sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := broker.NewClient(env.Svc.Config.AMQP)
	defer c.Close()
	if ok, err := exists(context.Background(), c, "queue", name); ok || err != nil {
		t.Fatalf("queue %s after the sweep: exists %t (%v)", name, ok, err)
	}
}

// TestWhatACrashedRunLeftIsRemovedByTheNextRunWhateverSlotItTakes: a run
// that died in slot b while slot a was busy; the next run takes slot a,
// free again by then, and still removes what slot b's run left, and frees
// slot b.
func TestWhatACrashedRunLeftIsRemovedByTheNextRunWhateverSlotItTakes(t *testing.T) {
	env := Connect(t)
	family := []string{PrefixEnv + "=x"} // the children's namespaces start xlabte…, apart from this process's
	exe, _ := os.Executable()
	hold := exec.Command(exe, "-test.run=^TestChild$", "-test.count=1")
	hold.Env = append(append(os.Environ(), childEnv+"=hold"), family...)
	stdin, _ := hold.StdinPipe()
	stdout, _ := hold.StdoutPipe()
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); hold.Wait() })
	sc := bufio.NewScanner(stdout)
	held := ""
	for held == "" && sc.Scan() {
		held, _ = strings.CutPrefix(sc.Text(), "ns ")
	}
	ns, m, out, code := child(t, "crash", family...)
	if code != 3 || all(m) < 10 || ns[:len(ns)-3] == held[:len(held)-3] {
		t.Fatalf("the crashing child: exit %d, made %d things in %s beside the holder's %s\n%s", code, all(m), ns, held, out)
	}
	t.Cleanup(func() {
		sc := &scope{svc: env.Svc, ns: ns, spaces: []string{ns}, queues: m.queues, exchanges: m.exchanges}
		sc.clean(context.Background(), &bytes.Buffer{})
	})
	stdin.Close() // the holder ends cleanly: its slot is free
	if err := hold.Wait(); err != nil {
		t.Fatalf("the holding child: %v", err)
	}
	next, _, out2, code2 := child(t, "connect", family...)
	crashed := ns[:len(ns)-3] // its slot's prefix
	if code2 != 0 || next[:len(next)-3] != held[:len(held)-3] || !strings.Contains(out2, "removed what an earlier run of "+crashed+" left") {
		t.Fatalf("the next child: exit %d in %s (the holder had %s, the crashed one %s)\n%s", code2, next, held, ns, out2)
	}
	if got := present(t, env.Svc, m); len(got) > 0 {
		t.Fatalf("slot %s's leftovers are still there: %v\n%s", crashed, got, out2)
	}
	b, err := os.ReadFile(filepath.Join(lockDir(), crashed+".lock"))
	if err != nil || strings.TrimSpace(string(b)) != "clean" {
		t.Errorf("slot %s after the sweep: %q, %v; want clean", crashed, b, err)
	}
}

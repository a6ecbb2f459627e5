package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/labs"
)

// bothLedgers ends a test lesson the way every lesson that runs must end:
// with an unsafe and a safe ledger (literal figures need no service).
const bothLedgers = "\n```ledger variant=unsafe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n"

func TestMain(m *testing.M) { labtest.Main(m) }

// labBin is the lab binary built from this checkout, lab-worker beside it
// (built once per test process).
func labBin(t testing.TB) string { return labtest.Lab(t) }

func runLab(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(labBin(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestReplayJSONHasTheDocumentedShapeAndJUnitIsValidXML(t *testing.T) {
	env := labtest.Connect(t)
	junit := filepath.Join(t.TempDir(), "r.xml")
	transcript := filepath.Join(t.TempDir(), "r.md")
	out, errOut, code := runLab(t, "replay", "idem-first-processing", "--json", "--junit", junit, "--transcript", transcript, "--namespace", env.NS)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "PASS  1 idem-first-processing") {
		t.Errorf("no progress line on stderr: %s", errOut)
	}
	var rep struct {
		Lessons []struct {
			ID         string `json:"id"`
			Number     int    `json:"number"`
			Title      string `json:"title"`
			Passed     bool   `json:"passed"`
			DurationMS *int64 `json:"duration_ms"`
			Steps      []struct {
				Kind     string `json:"kind"`
				Passed   *bool  `json:"passed"`
				Observed string `json:"observed"`
			} `json:"steps"`
		} `json:"lessons"`
		Passed *int `json:"passed"`
		Failed *int `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if len(rep.Lessons) != 1 || rep.Passed == nil || *rep.Passed != 1 || *rep.Failed != 0 {
		t.Fatalf("report: %+v", rep)
	}
	l := rep.Lessons[0]
	if l.ID != "idem-first-processing" || l.Number != 1 || l.Title == "" || !l.Passed || l.DurationMS == nil || len(l.Steps) < 10 {
		t.Fatalf("lesson: %+v", l)
	}
	if !strings.Contains(out, "Duplicate entry") {
		t.Error("the 1062 the lesson shows is not in what was observed")
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		XMLName xml.Name `xml:"testsuites"`
		Tests   int      `xml:"tests,attr"`
		Suites  []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("JUnit is not valid XML: %v", err)
	}
	if suites.Tests != len(l.Steps) || len(suites.Suites) != 1 {
		t.Errorf("JUnit: %d tests in %d suites, want %d in 1", suites.Tests, len(suites.Suites), len(l.Steps))
	}
	tr, _ := os.ReadFile(transcript)
	if !strings.Contains(string(tr), "INSERT INTO consumed_operation") || !strings.Contains(string(tr), env.Name(services.IdempotencyDB)) {
		t.Error("the transcript lacks the statements sent, with the namespace")
	}
}

func TestReplayExitsNonZeroWhenAnExpectationFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "wrong.md")
	os.WriteFile(p, []byte("# Wrong\n\n```lesson\nid: wrong\nnumber: 1\npart: idempotency\ntable: blog_idempotency_lab points_account\n```\n\n```reset db=blog_idempotency_lab\n```\n\n```sql\nSELECT points FROM points_account WHERE user_id=7;\n```\n\n```expect\nvalue 11\n```\n"+bothLedgers), 0o644)
	env := labtest.Connect(t)
	out, errOut, code := runLab(t, "replay", p, "--json", "--namespace", env.NS)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "wrong.md:17 expect: value 11: value is 0") {
		t.Errorf("stderr does not say where and what: %s", errOut)
	}
	if !strings.Contains(out, `"failed": 1`) {
		t.Errorf("json: %s", out)
	}
}

func TestMalformedLessonFileFailsWithFileAndLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.md")
	os.WriteFile(p, []byte("# Bad\n\n```lesson\nid: bad\nnumber: 1\npart: idempotency\n```\n\n```sql sesion=A\nSELECT 1;\n```\n"), 0o644)
	_, errOut, code := runLab(t, "replay", p)
	if code == 0 || !strings.Contains(errOut, "bad.md:9: sql step has unknown attribute \"sesion\"") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

func TestUnknownLessonAndBadNamespaceAreClearErrors(t *testing.T) {
	_, errOut, code := runLab(t, "replay", "no-such-lesson")
	if code != 2 || !strings.Contains(errOut, `no lesson "no-such-lesson"`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
	_, errOut, code = runLab(t, "replay", "--all", "--namespace", "Bad-NS")
	if code == 0 || !strings.Contains(errOut, "1–16 lowercase letters, digits or _") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

func TestUnreachableBrokerFailsWithinFiveSecondsWithoutThePassword(t *testing.T) {
	start := time.Now()
	_, errOut, code := runLab(t, "replay", "--all", "--no-docker", "--amqp", "amqp://guest:hunter2@127.0.0.1:1/")
	if code == 0 {
		t.Fatal("replay ran with no broker")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
	if !strings.Contains(errOut, "cannot reach RabbitMQ (amqp://guest:xxxxx@127.0.0.1:1/)") || strings.Contains(errOut, "hunter2") {
		t.Errorf("stderr: %s", errOut)
	}
}

func TestReplayRefusesAForeignDatabaseAndDropsNothing(t *testing.T) {
	env := labtest.Connect(t)
	db := env.Svc.MySQL
	name := env.Name(services.IdempotencyDB)
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE " + name + ".mine (id INT)"); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runLab(t, "replay", "idem-first-processing", "--namespace", env.NS)
	if code == 0 || !strings.Contains(errOut, "exists but was not created by the lab; nothing was dropped") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA=? AND TABLE_NAME='mine'", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatal("the foreign database was touched")
	}
}

func TestDoctorPassesAndPrintsNoPassword(t *testing.T) {
	amqpURL := labtest.Connect(t).Config().AMQP // guest:guest unless LAB_AMQP_URL names another
	out, errOut, code := runLab(t, "doctor", "--amqp", amqpURL)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"MariaDB", "RabbitMQ", "Redis", "skip-locked", "lessons can run", "of max_connections", "more labs at 8 each", "challenges (lab challenge run)", "python "} {
		if !strings.Contains(out, want) && !strings.Contains(out, strings.Replace(want, "MariaDB", "MySQL", 1)) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	shown := []string{"guest:guest"}
	if u, err := url.Parse(amqpURL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			shown = append(shown, u.User.Username()+":"+pw)
		}
	}
	for _, pw := range shown {
		if strings.Contains(out+errOut, pw) {
			t.Error("doctor printed a password")
		}
	}
}

func TestListShowsNumberedLessonsByPart(t *testing.T) {
	out, _, code := runLab(t, "list")
	if code != 0 || !strings.Contains(out, "idempotency") || !strings.Contains(out, " 1  idem-first-processing") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// signalExit checks a lab process ends promptly on a signal.
func signalExit(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("lab did not exit within 10s of %v", sig)
	}
}

// An instructor's directory with one broken file: list shows the rest and
// fails naming the file; replay --all runs the rest and reports the file as
// a failed lesson in its JSON, so CI cannot miss it.
func TestABrokenLessonFileFailsReplayAllButTheOthersStillRun(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "01-fine.md"), []byte("# Fine\n\n```lesson\nid: fine\nnumber: 1\npart: idempotency\n```\n\n```sql\nSELECT 1;\n```\n"+bothLedgers), 0o644)
	os.WriteFile(filepath.Join(dir, "02-bad.md"), []byte("# Bad\n\n```lesson\nid: bad\nnumber: 2\npart: idempotency\n```\n\n```sql sesion=A\nSELECT 1;\n```\n"), 0o644)
	out, errOut, code := runLab(t, "list", "--lessons", dir)
	if code != 1 || !strings.Contains(out, " 1  fine") || !strings.Contains(errOut, "02-bad.md:9: sql step has unknown attribute") {
		t.Fatalf("list: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	env := labtest.Connect(t)
	env.Lessons(labs.BrokerNames(dir))
	out, errOut, code = runLab(t, "replay", "--all", "--lessons", dir, "--json", "--namespace", env.NS)
	if code != 1 || !strings.Contains(errOut, "PASS  1 fine") {
		t.Fatalf("replay --all: exit %d, want 1 with fine passed\n%s", code, errOut)
	}
	var rep struct {
		Passed, Failed int
		Lessons        []struct{ ID, Why string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Passed != 1 || rep.Failed != 1 || len(rep.Lessons) != 2 || !strings.Contains(rep.Lessons[1].Why, "02-bad.md:9") {
		t.Fatalf("json: %+v", rep)
	}
	// Naming the good lesson runs it; the bad file is a warning there.
	_, errOut, code = runLab(t, "replay", "fine", "--lessons", dir, "--namespace", env.NS)
	if code != 0 || !strings.Contains(errOut, "02-bad.md:9") {
		t.Fatalf("replay fine: exit %d\n%s", code, errOut)
	}
}

// lab clean removes a namespace's marked databases, queues, exchanges and
// Redis keys, and leaves a same-named database it did not create.
func TestCleanRemovesOnlyWhatTheLabCreatedInTheNamespace(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "01-make.md"), []byte("# Make\n\n```lesson\nid: make-things\nnumber: 1\npart: broker\n```\n\n"+
		"```reset db=blog_outbox_lab queues=cleanq exchanges=cleanx redis=lab:*\n```\n\n"+
		"```declare\nexchange cleanx type=fanout\nqueue cleanq\nbind cleanq cleanx\n```\n\n"+
		"```redis\nSET lab:clean-me 1\n```\n"+bothLedgers), 0o644)
	env := labtest.Connect(t)
	env.Lessons(labs.BrokerNames(dir))
	ns := env.NS
	if _, errOut, code := runLab(t, "replay", "--all", "--lessons", dir, "--namespace", ns); code != 0 {
		t.Fatalf("making things: exit %d\n%s", code, errOut)
	}
	db := env.Svc.MySQL
	// Someone else's database with a lab name in this namespace.
	foreign := env.Name(services.IdempotencyDB)
	if _, err := db.Exec("CREATE DATABASE " + foreign); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runLab(t, "clean", "--lessons", dir, "--namespace", ns)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (one database left alone)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"done   DROP DATABASE " + env.Name(services.OutboxDB), "done   queue.delete " + env.Queue("cleanq"), "done   exchange.delete " + env.Exchange("cleanx"),
		"done   deleted 1 Redis key(s) matching lab_" + ns + ":*", "left   database " + foreign + " exists but was not created by the lab"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN (?,?)", env.Name(services.OutboxDB), foreign).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d of the two databases remain, want 1 (the one the lab did not create)", n)
	}
	// A second clean finds nothing of the lab's left.
	out, _, _ = runLab(t, "clean", "--lessons", dir, "--namespace", ns)
	if strings.Contains(out, "queue.delete") || strings.Contains(out, "DROP DATABASE blog_outbox") {
		t.Errorf("second clean did something:\n%s", out)
	}
}

// --all-namespaces finds the namespaces from the databases that carry the
// lab's mark, and from a workshop participant's MySQL or Redis user (one
// who never ran a reset has no database); a same-named database without
// the mark names no namespace. (The
// test does not run --all-namespaces itself: on a shared server that would
// clean everyone's.)
func TestAllNamespacesAreFoundFromTheLabsMarkedDatabases(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "01-make.md"), []byte("# Make\n\n```lesson\nid: make-db\nnumber: 1\npart: outbox\n```\n\n```reset db=blog_outbox_lab\n```\n"+bothLedgers), 0o644)
	env := labtest.Connect(t)
	ns1, ns2, foreign := env.Derived("a1"), env.Derived("a2"), env.Derived("fo")
	for _, ns := range []string{ns1, ns2} {
		if _, errOut, code := runLab(t, "replay", "--all", "--lessons", dir, "--namespace", ns); code != 0 {
			t.Fatalf("%s: exit %d\n%s", ns, code, errOut)
		}
	}
	if _, err := env.Svc.MySQL.Exec("CREATE DATABASE " + services.Names{NS: foreign}.Name(services.OutboxDB)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A workshop participant who never ran a reset: their logins, no
	// database (one found by its MySQL user, one by its Redis user).
	byMySQL, byRedis := env.Derived("pm"), env.Derived("pr")
	if _, err := services.MakeParticipantUser(ctx, env.Svc.MySQL, env.Config().MySQL, byMySQL, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := services.MakeRedisUser(ctx, env.Svc.Redis, env.Config().Redis, byRedis); err != nil {
		t.Fatal(err)
	}
	found, err := cleaner.Namespaces(ctx, env.Svc)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, n := range found {
		got[n.NS] = true
	}
	if !got[ns1] || !got[ns2] || got[foreign] || !got[byMySQL] || !got[byRedis] {
		t.Fatalf("namespaces found: %v", got)
	}
	for _, ns := range []string{ns1, ns2, byMySQL, byRedis} {
		if _, _, code := runLab(t, "clean", "--lessons", dir, "--namespace", ns); code != 0 {
			t.Errorf("clean %s: exit %d", ns, code)
		}
	}
	// Their cleaning removed the logins.
	var n int
	env.Svc.MySQL.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User=?", services.ParticipantUser(byMySQL)).Scan(&n)
	if u, _ := env.Svc.Redis.Do(ctx, "ACL", "GETUSER", services.RedisUser(byRedis)).Result(); n != 0 || u != nil {
		t.Errorf("lab clean --namespace left a participant's logins: %d MySQL users, Redis user %v", n, u)
	}
}

// lab worker KIND --help lists the program's pause points and its flags,
// which labs/README.md points instructors to.
func TestWorkerHelpListsEveryProgramsPausePointsAndFlags(t *testing.T) {
	for prog, flag := range map[string]string{"consumer": "--strategy", "relay": "--lease", "producer": "--order",
		"batch-consumer": "--queue", "executor": "--provider", "provider": "--listen"} {
		out, errOut, code := runLab(t, "worker", prog, "--help")
		if code != 0 || !strings.Contains(out, "pause points") || !strings.Contains(out, flag) {
			t.Errorf("lab worker %s --help: exit %d\n%s%s", prog, code, out, errOut)
		}
	}
	out, _, _ := runLab(t, "worker", "relay", "--help")
	if !strings.Contains(out, "after-confirm") {
		t.Errorf("relay's points are missing:\n%s", out)
	}
}

// lab check passes on the shipped lessons and, on a folder with a mistake,
// prints file:line and exits 1.
func TestCheckPassesTheShippedLessonsAndNamesAMistakesFileAndLine(t *testing.T) {
	if _, errOut, code := runLab(t, "check", "../../labs"); code != 0 {
		t.Fatalf("lab check labs/: exit %d\n%s", code, errOut)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "01-t.md"), []byte("# T\n\n```lesson\nid: t\nnumber: 1\npart: broker\n```\n\n```expcet\nok\n```\n"+bothLedgers), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("# Notes\n"), 0o644)
	out, _, code := runLab(t, "check", dir)
	if code != 1 || !strings.Contains(out, "01-t.md:9: ```expcet is not a step kind (did you mean expect?)") || !strings.Contains(out, "notes.md: skipped") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	// --lang zh says the verdict in Chinese.
	if _, errOut, _ := runLab(t, "check", "--lang", "zh", dir); !strings.Contains(errOut, "中有 1 个问题") {
		t.Errorf("lab check --lang zh: %s", errOut)
	}
	if _, errOut, _ := runLab(t, "check", "--lang", "zh", "../../labs"); !strings.Contains(errOut, "没有问题") {
		t.Errorf("lab check --lang zh labs/: %s", errOut)
	}
}

// lab clean --namespace removes what any lesson declared in the namespace,
// loaded or not: with the management API it reads the broker's own marks,
// so an instructor's lesson queues go without --lessons DIR. (CI's
// RabbitMQ 4.x node has the plugin; LAB_REQUIRE_MANAGEMENT=1 there.)
func TestCleanFindsAnyLessonsQueuesFromTheBrokersMarks(t *testing.T) {
	env := labtest.Connect(t)
	env.RequireManagement() // a skip here, a failure with LAB_REQUIRE_MANAGEMENT=1
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "01-mine.md"), []byte("# Mine\n\n```lesson\nid: mine\nnumber: 1\npart: broker\n```\n\n"+
		"```declare\nexchange mine.x type=fanout\nqueue mine.q\nbind mine.q mine.x\n```\n"+bothLedgers), 0o644)
	q, x := env.Queue("mine.q"), env.Exchange("mine.x")
	if _, errOut, code := runLab(t, "replay", "--all", "--lessons", dir, "--namespace", env.NS); code != 0 {
		t.Fatalf("replay: exit %d\n%s", code, errOut)
	}
	out, errOut, code := runLab(t, "clean", "--namespace", env.NS) // no --lessons
	if code != 0 || !strings.Contains(out, "queue.delete "+q) || !strings.Contains(out, "exchange.delete "+x) {
		t.Fatalf("clean: exit %d\n%s%s", code, out, errOut)
	}
}

// Each command parses its own flags: another command's flag is refused
// with this command's usage (lab list --goto 3 used to be accepted), and
// -h prints the command's own usage, not the general one.
func TestEachCommandHasItsOwnFlagsAndUsage(t *testing.T) {
	_, errOut, code := runLab(t, "list", "--goto", "3")
	if code != 2 || !strings.Contains(errOut, "-goto") || !strings.Contains(errOut, "usage: lab list") {
		t.Errorf("lab list --goto 3: exit %d\n%s", code, errOut)
	}
	_, errOut, code = runLab(t, "room", "--help")
	if code != 0 || !strings.Contains(errOut, "usage: lab room --room NAME") || !strings.Contains(errOut, "-timer") || strings.Contains(errOut, "-junit") {
		t.Errorf("lab room --help: exit %d\n%s", code, errOut)
	}
	_, errOut, code = runLab(t, "clean", "--json")
	if code != 2 || !strings.Contains(errOut, "usage: lab clean") {
		t.Errorf("lab clean --json: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = runLab(t, "open"); code != 2 || !strings.Contains(errOut, "name one lesson id or number") {
		t.Errorf("lab open with no lesson: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = runLab(t, "--no-docker", "list"); code != 2 || !strings.Contains(errOut, "flags go after the command: `lab list --no-docker`") {
		t.Errorf("lab --no-docker list: exit %d\n%s", code, errOut)
	}
	// A flag of the command's own after it, the global one before it.
	if _, errOut, code = runLab(t, "--lang", "zh", "replay", "--all"); code != 2 || !strings.Contains(errOut, "参数要写在命令之后：`lab replay --lang zh --all`") {
		t.Errorf("lab --lang zh replay --all: exit %d\n%s", code, errOut)
	}
	// A flag's value that is a command's name is the value: the screen's
	// own error, not advice to move the flags.
	if _, errOut, code = runLab(t, "--namespace", "list", "--bogus"); code != 2 || strings.Contains(errOut, "after the command") || !strings.Contains(errOut, "-bogus") {
		t.Errorf("lab --namespace list --bogus: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = runLab(t, "serve", "--help"); code != 0 || !strings.Contains(errOut, "-login-timeout") {
		t.Errorf("lab serve --help lists no flags: exit %d\n%s", code, errOut)
	}
	// lab --help lists every command, then lab's own flags.
	_, errOut, code = runLab(t, "--help")
	for _, c := range commands[1:] {
		if c != "help" && c != "worker" && !strings.Contains(errOut, "lab "+c) {
			t.Errorf("lab --help does not list lab %s: exit %d\n%s", c, code, errOut)
		}
	}
	if !strings.Contains(errOut, "-namespace") {
		t.Errorf("lab --help lists no flags:\n%s", errOut)
	}
}

// lab doctor fails, saying what it could not read, when the server refuses
// the max_connections query (here: a user whose query limit is spent by
// the first statements): unknown room is no room to promise. It used to
// exit 0.
func TestDoctorFailsWhenItCannotReadTheConnectionRoom(t *testing.T) {
	env := labtest.Connect(t)
	user := "labdoc_" + env.NS
	db := env.Svc.MySQL
	for _, stmt := range []string{
		"DROP USER IF EXISTS '" + user + "'@'%'",
		"CREATE USER '" + user + "'@'%' WITH MAX_QUERIES_PER_HOUR 1",
		"GRANT ALL ON *.* TO '" + user + "'@'%'",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() { db.Exec("DROP USER IF EXISTS '" + user + "'@'%'") })
	dc, err := gomysql.ParseDSN(env.Config().MySQL)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runLab(t, "doctor", "--no-docker", "--mysql", user+"@tcp("+dc.Addr+")/")
	if code != 1 || !strings.Contains(out, "FAIL connections") || !strings.Contains(out, "could not read max_connections") {
		t.Fatalf("exit %d:\n%s%s", code, out, errOut)
	}
}

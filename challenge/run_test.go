package challenge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/challenge"
	"github.com/rmlab/lab/internal/catalog"
	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/room"
)

func TestMain(m *testing.M) {
	// Each test here is a whole pipeline that mostly waits.
	labtest.MainParallel(m, 4)
}

// python is Debian's python3 with python3-pika and python3-pymysql (a
// python3 earlier on PATH, pyenv's, may lack them).
const python = "/usr/bin/python3"

// seedsOf are the seeds a reference solution must pass: seed 1, and for
// the Go solutions of once and relay (what the "done when" names)
// seeds 1..LAB_CHALLENGE_SEEDS (CI's second matrix runs 5).
func seedsOf(challenge, solution string) []uint64 {
	out := []uint64{1}
	if solution != "go/"+challenge || challenge != "once" && challenge != "relay" {
		return out
	}
	n, _ := strconv.Atoi(os.Getenv("LAB_CHALLENGE_SEEDS"))
	for s := uint64(2); s <= uint64(n); s++ {
		out = append(out, s)
	}
	return out
}

// runs bounds how many challenge runs go at once: each is a whole
// pipeline (mostly waiting), and two cores are shared with the other
// packages' tests.
var runs = make(chan struct{}, 4)

// program is the argv that runs a solution or a starter (go/once,
// python/consumer, starter:go/relay); a Go one is built first, as `go
// run` would on its first start.
func program(t *testing.T, which string) []string {
	t.Helper()
	if which == "cheats" {
		bin := filepath.Join(t.TempDir(), "cheats")
		if out, err := exec.Command("go", "build", "-o", bin, "./testdata/cheats").CombinedOutput(); err != nil {
			t.Fatalf("go build ./testdata/cheats: %v\n%s", err, out)
		}
		return []string{bin}
	}
	lang, name, _ := strings.Cut(which, "/")
	dir := filepath.Join("solutions", lang, name)
	if l, ok := strings.CutPrefix(lang, "starter:"); ok {
		lang, dir = l, filepath.Join("starters", l, name)
	}
	if lang == "python" {
		// Not on a machine with only what the README's first lines name:
		// said in go test's output, and required where CI sets
		// LAB_REQUIRE_PYTHON=1.
		labtest.Needs(t, labtest.Python)
		abs, _ := filepath.Abs(filepath.Join(dir, "main.py"))
		return []string{python, abs}
	}
	bin := filepath.Join(t.TempDir(), "program")
	if out, err := exec.Command("go", "build", "-o", bin, "./"+dir).CombinedOutput(); err != nil {
		t.Fatalf("go build ./%s: %v\n%s", dir, err, out)
	}
	return []string{bin}
}

type verdict struct {
	code    int
	summary chaos.Summary
	out     string
	prog    *progress.File
}

// run is `lab challenge run NAME --seed S -- argv` in a namespace of the
// test's own, with a progress file of its own.
func run(t *testing.T, name string, seed uint64, argv []string, flags ...string) verdict {
	t.Helper()
	if !slices.Contains(flags, "--shared-server") {
		// The run's evidence on a server of the lab's own, made for it.
		labtest.Needs(t, labtest.OwnMySQL)
	}
	runs <- struct{}{}
	defer func() { <-runs }()
	env := labtest.Of(t)
	env.Queue(chaos.QueueName)
	dir := t.TempDir()
	args := append([]string{"challenge", "run", name, "--namespace", env.NS, "--seed", strconv.FormatUint(seed, 10),
		"--json", filepath.Join(dir, "verdict.json"), "--no-docker"}, flags...)
	args = append(append(args, "--"), argv...)
	cmd := exec.Command(labtest.Lab(t), args...)
	cmd.Env = append(os.Environ(), progress.Env+"="+filepath.Join(dir, "progress.json"))
	if !slices.Contains(flags, "--room") {
		// rabbitmqctl boots an Erlang VM three times a run to make the
		// program's RabbitMQ user: the one run in a room proves that path
		// (loginsShownAndGone); the others run on the proxy's refusals (or
		// the management API, where it answers).
		cmd.Env = append(cmd.Env, "LAB_BROKER_CONTROL=")
	}
	out, err := cmd.CombinedOutput()
	v := verdict{code: cmd.ProcessState.ExitCode(), out: string(out)}
	if err != nil && v.code != 1 {
		t.Fatalf("lab %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
	if err != nil {
		t.Fatalf("no verdict: %v\n%s", err, out)
	}
	if err := json.Unmarshal(b, &v.summary); err != nil {
		t.Fatal(err)
	}
	v.prog, _ = progress.Load(filepath.Join(dir, "progress.json"))
	return v
}

func TestEveryReferenceSolutionPassesTheChallengesItClaimsUnderEachSeed(t *testing.T) {
	all, err := challenge.All("en")
	if err != nil {
		t.Fatal(err)
	}
	// Each solution on the highest rung that lists it: the rungs below ask
	// less of it, and every rung's run takes 12 s.
	top := map[string]string{}
	for _, c := range all {
		for _, sol := range c.Solutions {
			top[sol] = c.Name
		}
	}
	for _, c := range all {
		for _, sol := range c.Solutions {
			if top[sol] != c.Name && !(sol == "go/once" && c.Name == "once") {
				continue
			}
			for _, seed := range seedsOf(c.Name, sol) {
				// No slash in the name: go test -run splits its pattern there.
				t.Run(fmt.Sprintf("%s_%s_seed%d", c.Name, strings.ReplaceAll(sol, "/", "-"), seed), func(t *testing.T) {
					t.Parallel()
					// One run keeps its verdict in a workshop room, for the
					// instructor (lab challenge run --room --as).
					inRoom := c.Name == "once" && sol == "go/once" && seed == 1
					var flags []string
					if inRoom {
						flags = openRoom(t)
					}
					// 6 s of schedule: every kind of fault comes in the first
					// five, and CI has many of these to run.
					v := run(t, c.Name, seed, program(t, sol), append(flags, "--duration", "6s")...)
					if v.code != 0 || !v.summary.OK() {
						t.Fatalf("%s does not pass %s under seed %d (exit %d):\n%s", sol, c.Name, seed, v.code, v.out)
					}
					if v.summary.Committed != v.summary.Orders || v.summary.Once != v.summary.Committed {
						t.Fatalf("a pass with %d of %d orders applied once", v.summary.Once, v.summary.Orders)
					}
					if p := v.prog.Challenges[c.Name]; p == nil || !p.Passed || p.Seeds[0] != seed {
						t.Errorf("the pass was not kept in the progress: %+v", p)
					}
					if inRoom {
						roomSays(t, "once ✓ (seed 1)")
						loginsShownAndGone(t, v.out)
					}
				})
			}
		}
	}
}

// Each starter fails its challenge, and each rung's solution fails the
// next rung, each with an explanation of an order that went wrong: the
// ladder's checks can fail.
func TestTheStartersAndTheRungBelowFailWithAnExplanationOfAnOrder(t *testing.T) {
	for _, c := range []struct {
		name, prog string
		verdict    string // of the first explanation
		because    string
	}{
		{"once", "starter:go/consumer", "applied twice", "your consumer applied"},
		{"once", "starter:python/consumer", "applied twice", ""},
		// The starters publish without confirms: the evidence says so first.
		{"relay", "starter:go/relay", "SENT without a confirm", "never asked for: confirm.select"},
		{"relay", "starter:python/relay", "SENT without a confirm", "never asked for: confirm.select"},
		{"business-key", "go/once", "applied twice", "under a new message id"},
		{"conflict", "go/business-key", "conflict not recorded", "consumed_conflict"},
		{"sms", "starter:go/sms", "applied twice", "Idempotency-Key"},
		{"order", "starter:go/order", "left stale", "older version"},
		{"sms", "starter:python/sms", "applied twice", "Idempotency-Key"},
		{"order", "starter:python/order", "left stale", "older version"},
	} {
		t.Run(c.name+"_"+strings.NewReplacer("/", "-", ":", "-").Replace(c.prog), func(t *testing.T) {
			t.Parallel()
			// Every kind of fault comes in the first five, so 5 s of
			// schedule fail what fails.
			v := run(t, c.name, 1, program(t, c.prog), "--duration", "5s")
			if v.code != 1 || v.summary.OK() {
				t.Fatalf("%s passed %s (exit %d):\n%s", c.prog, c.name, v.code, v.out)
			}
			if len(v.summary.Why) == 0 {
				t.Fatalf("a fail with no explanation:\n%s", v.out)
			}
			w := v.summary.Why[0]
			if c.verdict != "" && w.Verdict != c.verdict || !strings.Contains(w.Because, c.because) || len(w.Story) < 2 {
				t.Errorf("the first explanation: %s", w.Text())
			}
			if !strings.Contains(v.out, "why:") || !strings.Contains(v.out, fmt.Sprintf("order %d —", w.Order)) {
				t.Errorf("the verdict does not print the explanation:\n%s", v.out)
			}
			if p := v.prog.Challenges[c.name]; p == nil || p.Passed || p.Runs != 1 {
				t.Errorf("the fail was not kept in the progress as a run: %+v", p)
			}
		})
	}
}

// A learner who runs a challenge in Chinese reads its report in Chinese:
// the schedule, the counts, the verdict, every explanation of an order and
// its story. What stays English is the program's own output (its last
// lines, the line it died on), names, code and the broker's error text.
func TestAChallengesReportInChineseHoldsNoEnglishSentenceOfTheLabs(t *testing.T) {
	v := run(t, "once", 1, program(t, "starter:go/consumer"), "--duration", "5s", "--lang", "zh")
	if v.code != 1 || len(v.summary.Why) == 0 {
		t.Fatalf("the starter did not fail with an explanation (exit %d):\n%s", v.code, v.out)
	}
	if !strings.Contains(v.out, "原因：") || !strings.Contains(v.out, fmt.Sprintf("订单 %d —", v.summary.Why[0].Order)) {
		t.Errorf("the explanation is not said in Chinese:\n%s", v.out)
	}
	programLine := regexp.MustCompile(`\+\d+(\.\d+)?s .*$`) // where a program's own line begins
	inProgram := false
	var english []string
	for _, line := range strings.Split(v.out, "\n") {
		switch {
		case strings.HasSuffix(line, "它最后的输出："):
			inProgram = true // its lines follow, to the blank line
			continue
		case strings.TrimSpace(line) == "":
			inProgram = false
		}
		if inProgram {
			continue
		}
		if s := catalog.Sentence(programLine.ReplaceAllString(line, "")); s != "" {
			english = append(english, line+"  («"+s+"»)")
		}
	}
	if len(english) > 0 {
		t.Errorf("%d lines of the Chinese report hold English:\n%s", len(english), strings.Join(english, "\n"))
	}
}

// openRoom opens a workshop room named after the test's namespace (the
// harness drops it) and returns the flags that put a verdict there.
func openRoom(t *testing.T) []string {
	t.Helper()
	env := labtest.Of(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rm, err := room.Open(ctx, env.Svc.MySQL, env.Config().MySQL, env.NS, "test")
	if err != nil {
		t.Fatal(err)
	}
	rm.Close()
	return []string{"--room", env.NS, "--as", "alice"}
}

// roomSays checks that lab room lists alice's challenges as want.
func roomSays(t *testing.T, want string) {
	t.Helper()
	env := labtest.Of(t)
	out, err := exec.Command(labtest.Lab(t), "room", "--room", env.NS, "--no-docker").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "challenges: "+want) || !strings.Contains(string(out), "alice") {
		t.Errorf("lab room does not list alice's challenge as %q (%v):\n%s", want, err, out)
	}
}

// cheatSeeds are the seeds a cheat that a kill could let through by luck
// is run under: 1, and up to LAB_CHALLENGE_SEEDS (at most max).
func cheatSeeds(max int) []uint64 {
	out := []uint64{1}
	n, _ := strconv.Atoi(os.Getenv("LAB_CHALLENGE_SEEDS"))
	for s := 2; s <= min(n, max); s++ {
		out = append(out, uint64(s))
	}
	return out
}

// Programs that try to pass without doing the work, or do it wrong in a
// way only evidence shows, each fail with a violation that names what it
// did (testdata/cheats). They hold what the contract gives a program.
func TestEveryCheatFailsWithAViolationThatNamesWhatItDid(t *testing.T) {
	for _, c := range []struct {
		challenge, cheat string
		want             []string // in the violations
		maxSeed          int
	}{
		{"once", "bulk", []string{"unearned:", "no message of order"}, 1},
		{"once", "purge", []string{"forbidden:", "sent queue.purge"}, 1},
		{"business-key", "assign", []string{"size:", "never set the balance"}, 1},
		{"conflict", "invent-conflicts", []string{"conflict: conflict rows no delivery carried"}, 1},
		{"order", "bulk-paid", []string{"unearned:", "PAID v2"}, 1},
		{"sms", "sms-up-front", []string{"unearned:", "an SMS to user"}, 1},
		{"relay", "relay-nothing", []string{"sent:", "it never published it"}, 1},
		{"once", "ack-before-commit", []string{"acked:", "ack only after the commit"}, 5},
		{"relay", "relay-no-confirms", []string{"sent:", "never asked for"}, 3},
		// An ack before the commit once some effect of the order is in:
		// the ack stands for its own event's effect.
		{"order", "order-early-ack", []string{"acked:", "ack only after the commit"}, 1},
		{"conflict", "conflict-early-ack", []string{"acked:", "ack only after the commit"}, 1},
	} {
		for _, seed := range cheatSeeds(c.maxSeed) {
			t.Run(fmt.Sprintf("%s_%s_seed%d", c.challenge, c.cheat, seed), func(t *testing.T) {
				t.Parallel()
				v := run(t, c.challenge, seed, append(program(t, "cheats"), c.cheat), "--duration", "5s")
				if v.code != 1 || v.summary.OK() {
					t.Fatalf("the cheat %s passed %s under seed %d (exit %d):\n%s", c.cheat, c.challenge, seed, v.code, v.out)
				}
				all := strings.Join(v.summary.Violations, "\n")
				for _, w := range c.want {
					if !strings.Contains(all, w) {
						t.Errorf("the violations do not say %q:\n%s", w, all)
					}
				}
				if len(v.summary.Why) == 0 || !strings.Contains(v.out, "why:") {
					t.Errorf("no explanation printed:\n%s", v.out)
				}
				if c.cheat == "relay-nothing" && !strings.Contains(strings.Join(v.summary.Refused, "\n"), "refused UPDATE on") {
					t.Errorf("the verdict does not say what the program was refused: %q", v.summary.Refused)
				}
			})
		}
	}
}

// A consumer with no mark, beside a thread that looks for a login beyond
// the one its run gave it (root with no password where its server is or on
// the machine's default server, any DSN another process shows in its
// environment or arguments) to undo every second application and delete
// its audit rows: on the run's own server it finds none, and fails.
func TestACheatLookingForTheMachinesAdminLoginFindsNoneAndFails(t *testing.T) {
	for _, seed := range cheatSeeds(3) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			v := run(t, "once", seed, append(program(t, "cheats"), "root"), "--duration", "5s")
			if strings.Contains(v.out, "found a login that reads lab_applied") || !strings.Contains(v.out, "no login beyond my own") {
				t.Errorf("the cheat found a login beyond its own:\n%s", v.out)
			}
			if v.code != 1 || v.summary.OK() {
				t.Fatalf("the root cheat passed once under seed %d (exit %d):\n%s", seed, v.code, v.out)
			}
		})
	}
}

// A correct program whose evidence was kept on the shared server
// (--shared-server), where that server's administrators could have
// rewritten it, is unproven: not passed, and said so.
func TestARunOnTheSharedServerIsUnprovenNeverPassed(t *testing.T) {
	v := run(t, "once", 1, program(t, "go/once"), "--duration", "5s", "--shared-server")
	if v.code != 1 || v.summary.OK() || v.summary.Unproven == "" || len(v.summary.Violations) > 0 ||
		!strings.Contains(v.out, "UNPROVEN") || strings.Contains(v.out, "passed once") {
		t.Fatalf("a correct program on the shared server (exit %d, unproven %q, violations %q):\n%s", v.code, v.summary.Unproven, v.summary.Violations, v.out)
	}
}

// A correct consumer that exits 0 after every 25 messages passes: no
// fault armed for one of its lives hits the next (a kill armed at an ack
// used to fire on the restarted copy and leave it stopped to the end).
func TestACorrectProgramThatExitsOnItsOwnPassesEverySeed(t *testing.T) {
	for _, seed := range cheatSeeds(5) {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			v := run(t, "once", seed, append(program(t, "cheats"), "exit-on-its-own"), "--duration", "5s")
			if v.code != 0 || !v.summary.OK() {
				t.Fatalf("a correct program that exits on its own failed under seed %d (exit %d):\n%s", seed, v.code, v.out)
			}
		})
	}
}

// loginsShownAndGone checks that the run said which MySQL users (one per
// copy) and which RabbitMQ user the program ran as, and that none of them
// is left on the servers.
func loginsShownAndGone(t *testing.T, out string) {
	t.Helper()
	env := labtest.Of(t)
	prefix := "rmlab_" + env.NS + "_"
	for _, u := range []string{prefix + "c1", prefix + "c2"} {
		if !strings.Contains(out, "it runs as MySQL user "+u+" ") {
			t.Errorf("the run does not say its program runs as the MySQL user %s:\n%s", u, out)
		}
	}
	var left int
	if err := env.Svc.MySQL.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User LIKE ?", prefix+"%").Scan(&left); err != nil || left != 0 {
		t.Errorf("MySQL users of the run left behind: %d (%v)", left, err)
	}
	rmq := prefix + "consumer"
	if !strings.Contains(out, "it runs as RabbitMQ user "+rmq+" ") {
		if os.Getenv("LAB_BROKER_CONTROL") == "rabbitmqctl" || os.Getenv("LAB_REQUIRE_MANAGEMENT") != "" {
			t.Errorf("the run does not say its program runs as the RabbitMQ user %s:\n%s", rmq, out)
		}
		return
	}
	ctl := os.Getenv("LAB_RABBITMQCTL")
	if ctl == "" {
		ctl = "rabbitmqctl"
	}
	users, err := exec.Command(ctl, "-q", "list_users").CombinedOutput()
	if err != nil {
		t.Logf("cannot list RabbitMQ users with %s (%v): not checked", ctl, err)
		return
	}
	if strings.Contains(string(users), rmq) {
		t.Errorf("the RabbitMQ user %s is left behind:\n%s", rmq, users)
	}
}

// Where the lab's login cannot create MySQL users, the run refuses to
// grade (exit 2) and says why, rather than give the program its own login.
func TestARunWhoseLoginCannotCreateUsersRefusesToGrade(t *testing.T) {
	env := labtest.Of(t)
	env.Queue(chaos.QueueName)
	user := "labnocu_" + env.NS
	db := env.Svc.MySQL
	for _, stmt := range []string{
		"DROP USER IF EXISTS '" + user + "'@'%'",
		"CREATE USER '" + user + "'@'%'",
		"GRANT ALL ON *.* TO '" + user + "'@'%'",
		"REVOKE CREATE USER ON *.* FROM '" + user + "'@'%'",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() { db.Exec("DROP USER IF EXISTS '" + user + "'@'%'") })
	dc, err := mysql.ParseDSN(env.Config().MySQL)
	if err != nil {
		t.Fatal(err)
	}
	dc.User, dc.Passwd, dc.DBName = user, "", ""
	cmd := exec.Command(labtest.Lab(t), "challenge", "run", "once", "--namespace", env.NS, "--no-docker", "--shared-server", "--mysql", dc.FormatDSN(), "--", "true")
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "cannot give your program a MySQL user of its own") ||
		!strings.Contains(string(out), "CREATE USER") || strings.Contains(string(out), "PASS") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

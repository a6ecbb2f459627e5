package ui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"

	tea "charm.land/bubbletea/v2"
)

// walkLanes is how many lessons the walk runs side by side, each lane in a
// namespace of its own (labtest), as `lab replay --parallel` does; the
// slowest lessons are taken first so the lanes end together.
const walkLanes = 6

// walkStepTimeout bounds one step: worker waits, lock waits and sleeps take
// seconds, never a minute.
const walkStepTimeout = 60 * time.Second

// walkEnv connects to the services in a namespace of the test's own, with
// real lab worker processes and the broker's queue reader, as `lab open`
// does.
func walkEnv(t *testing.T) *steps.Env {
	t.Helper()
	svc := labtest.Connect(t).Svc
	// Replay's short waits (a 30 s lease waits 3): the walk proves every
	// lesson runs to its end by keys on the screen, not how long a lease
	// is; the replay tests and the second matrix run the real waits' logic.
	return &steps.Env{Svc: svc, Binary: labBinary(t), Queues: broker.QueueReader(svc), Replay: true}
}

// walkFirst are the lessons that take longest (a three-node cluster, the
// chaos runs): a lane starts on them.
var walkFirst = []string{"broker-cluster", "outbox-chaos"}

// TestEveryLessonCanBeWalkedWithKeysAlone opens every built-in lesson in
// the real screen model, against the real services and real worker
// processes, and walks it to the end with key presses only: enter runs the
// next step; a choice or predict menu is answered with down and enter. In
// English the last option of every menu is taken (a path off the default),
// in Chinese the first. No step may fail, the ledger must show a verdict for
// both the unsafe and the safe variant, and after quitting no worker
// process of the lane's namespace may be left.
func TestEveryLessonCanBeWalkedWithKeysAlone(t *testing.T) {
	for _, lang := range []struct {
		name  string
		last  bool  // take the last option of each menu (else the first)
		only  []int // lesson numbers walked (nil: all)
		audit bool  // audit every frame at every size, in en and zh
	}{
		{"en", true, nil, true},
		{"zh", false, []int{1, 13, 24, 30}, false},
	} {
		t.Run(lang.name, func(t *testing.T) {
			ls, err := labs.Builtin(lang.name)
			if err != nil {
				t.Fatal(err)
			}
			var todo []*lab.Lesson
			for _, l := range ls {
				if lang.only == nil || containsInt(lang.only, l.Number) {
					todo = append(todo, l)
				}
			}
			if want := len(lang.only); lang.only != nil && len(todo) != want {
				t.Errorf("walking %d %s lessons, want %d (lessons %v)", len(todo), lang.name, want, lang.only)
			}
			if len(todo) == 0 {
				t.Fatalf("no %s lessons to walk", lang.name)
			}
			sort.SliceStable(todo, func(i, j int) bool {
				return slices.Contains(walkFirst, todo[i].ID) && !slices.Contains(walkFirst, todo[j].ID)
			})
			queue := make(chan *lab.Lesson, len(todo))
			for _, l := range todo {
				queue <- l
			}
			close(queue)
			for lane := 1; lane <= walkLanes; lane++ {
				t.Run(fmt.Sprintf("walk%s%d", lang.name, lane), func(t *testing.T) {
					t.Parallel()
					env := walkEnv(t)
					ns := env.Svc.Names.NS
					t.Cleanup(func() {
						if left := walkWorkers(ns); len(left) > 0 {
							t.Errorf("lab worker processes of namespace %s left after the test: %s", ns, strings.Join(left, "; "))
						}
					})
					for l := range queue {
						t.Run(l.ID, func(t *testing.T) { walkLesson(t, env, "", lang.name, l, lang.last, lang.audit) })
					}
				})
			}
		})
	}
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// walkLesson opens lesson l in a fresh screen (fresh progress file) and
// walks it with keys. dir is the lessons directory, "" for the built-in
// lessons.
// walkLesson walks lesson l by keys; pause, when given, is how long the
// reader waits before answering each menu (a slow reader's).
func walkLesson(t *testing.T, env *steps.Env, dir, lang string, l *lab.Lesson, last, audit bool, pause ...time.Duration) {
	a, err := newApp(context.Background(), Options{Env: env, Lang: lang, Start: l.ID, LessonsDir: dir,
		Progress: progress.FileStore{Path: filepath.Join(t.TempDir(), "progress.json")}})
	if err != nil {
		t.Fatal(err)
	}
	// On a failure path the run is still closed (workers killed) before the
	// temp dir goes; shutdown is idempotent.
	t.Cleanup(a.shutdown)
	d := newDriver(t, a)
	d.handle(tea.WindowSizeMsg{Width: 200, Height: 60})
	d.until("the lesson to open", 10*time.Second, func(a *App) bool {
		return idle(a) && a.sess.lessonID == l.ID
	})
	tx := a.c.t()
	s := a.sess
	// The screen audit: every frame of the walk drawn at three sizes in
	// both languages, as a learner at any terminal would see it.
	au := newAuditor(t, d, a)
	check := func(where string) {
		if audit {
			au.frame(where)
		}
	}
	defer func() {
		if audit {
			t.Logf("screen audit: %d frames", au.frames)
		}
	}()
	check("the lesson opened")

	if l.ExplainOnly || len(s.steps) == 0 {
		if v := plainView(a.lesson.View()); !strings.Contains(v, tx.ExplainOnly) {
			t.Errorf("explain-only lesson: the pane does not say so:\n%s", v)
		}
		if v := plainView(a.panels.ledger.View()); !strings.Contains(v, tx.NoLedger) {
			t.Errorf("explain-only lesson shows a ledger:\n%s", v)
		}
		quitAndCheck(t, d, a, env.Svc.Names.NS)
		return
	}

	menus := 0
	for !s.Done() {
		prev := s.next
		st := s.steps[prev]
		if ch := s.pendingChoice(); ch != nil {
			menus++
			if len(pause) > 0 {
				t.Logf("step %d: reading for %s before the menu", prev+1, pause[0])
				time.Sleep(pause[0])
			}
			if ch.Kind == "predict" {
				d.press("down") // nothing is preselected at a predict: down takes the first
			}
			if last {
				for i := 1; i < len(steps.Options(ch)); i++ {
					d.press("down")
				}
			}
			if want := walkPick(ch, last); s.cursor != want {
				t.Fatalf("step %d (%s line %d): the menu cursor is on option %d after the keys, want %d",
					prev+1, ch.Kind, ch.Line, s.cursor, want)
			}
			check(fmt.Sprintf("step %d (%s line %d), its menu open", prev+1, ch.Kind, ch.Line))
		}
		d.press("enter")
		if !s.running {
			t.Fatalf("step %d (%s line %d): enter did not start it; screen:\n%s",
				prev+1, st.Kind, st.Line, plainView(a.render()))
		}
		d.until(fmt.Sprintf("step %d (%s, line %d) to finish", prev+1, st.Kind, st.Line), walkStepTimeout,
			func(a *App) bool { return idle(a) && a.sess.next > prev })
		check(fmt.Sprintf("step %d (%s line %d) done", prev+1, st.Kind, st.Line))
		if r := s.results[prev]; !r.Passed && !r.Skipped {
			t.Fatalf("step %d/%d (%s, %s:%d) failed: %s\nobserved:\n%s\nscreen:\n%s",
				prev+1, len(s.steps), st.Kind, filepath.Base(st.File), st.Line, r.Why, r.Observed, plainView(a.render()))
		}
	}

	// Every step ran or was skipped as off the chosen path; none failed.
	ran := 0
	for i, st := range s.steps {
		r, ok := s.results[i]
		switch {
		case !ok:
			t.Errorf("step %d (%s line %d) has no result", i+1, st.Kind, st.Line)
		case !r.Passed && !r.Skipped:
			t.Errorf("step %d (%s line %d) failed: %s", i+1, st.Kind, st.Line, r.Why)
		case !r.Skipped:
			ran++
		}
	}
	if ran == 0 {
		t.Errorf("no step ran")
	}
	for _, st := range s.steps {
		if isMenu(st) && !s.picked(st) {
			t.Errorf("menu %s %q (line %d) was never answered", st.Kind, st.Attrs["name"], st.Line)
		}
	}
	if menus > 0 {
		t.Logf("%d menus answered with the %s option", menus, map[bool]string{true: "last", false: "first"}[last])
	}

	// The lesson pane says the lesson is finished, and no failure.
	pv := plainView(a.lesson.View())
	if !strings.Contains(pv, strings.TrimSpace(tx.PaneDone)) || !strings.Contains(pv, tx.Complete) {
		t.Errorf("the lesson pane does not say the lesson is finished:\n%s", pv)
	}
	if strings.Contains(pv, strings.TrimSpace(tx.LastFailed)) || a.statusBad {
		t.Errorf("the screen shows a failure (status %q):\n%s", a.status, pv)
	}

	// The ledger panel shows both columns, each with a verdict.
	checkLedgerView(t, a, s)
	quitAndCheck(t, d, a, env.Svc.Names.NS)
}

// walkPick is the cursor position the walk takes at a menu.
func walkPick(st *lab.Step, last bool) int {
	if last {
		return len(steps.Options(st)) - 1
	}
	return 0
}

// checkLedgerView reads the ledger panel as drawn: the unsafe and safe
// column headings, then a verdict row with the verdict of each variant's
// latest ledger in the screen's language.
func checkLedgerView(t *testing.T, a *App, s *session) {
	t.Helper()
	tx := a.c.t()
	v := plainView(a.panels.ledger.View())
	// The verdict each column must show is what the lesson's author wrote
	// (the expect= of the ledger step it came from), not what the code
	// under test computed.
	var unsafe, safe string
	for i := range s.ledgers {
		want := s.steps[s.ledgerSteps[i]].Attrs["expect"]
		switch s.ledgers[i].Variant {
		case "unsafe":
			unsafe = want
		case "safe":
			safe = want
		}
	}
	if unsafe == "" || safe == "" {
		t.Errorf("the lesson's ledger steps did not record both variants with an expect= (unsafe %q, safe %q)", unsafe, safe)
		return
	}
	var head, verdict string
	for _, line := range strings.Split(v, "\n") {
		line = strings.Trim(line, "│ ")
		f := strings.Fields(line)
		if head == "" && len(f) == 2 && f[0] == tx.LedgerUnsafe && f[1] == tx.LedgerSafe {
			head = line
		}
		if strings.HasPrefix(line, tx.LedgerVerdict+" ") {
			verdict = line
		}
	}
	if head == "" {
		t.Errorf("the ledger panel has no %q | %q heading:\n%s", tx.LedgerUnsafe, tx.LedgerSafe, v)
	}
	if verdict == "" {
		t.Errorf("the ledger panel has no %q row:\n%s", tx.LedgerVerdict, v)
		return
	}
	uv, sv := tx.Verdicts[unsafe], tx.Verdicts[safe]
	rest := strings.TrimSpace(strings.TrimPrefix(verdict, tx.LedgerVerdict))
	i := strings.Index(rest, uv)
	if uv == "" || sv == "" || i != 0 || !strings.Contains(rest[len(uv):], sv) {
		t.Errorf("the verdict row %q does not read %q (unsafe) then %q (safe):\n%s", verdict, uv, sv, v)
	}
}

// quitAndCheck presses q, closes the app as Run does after the program
// ends, and checks no worker of namespace ns outlived it.
func quitAndCheck(t *testing.T, d *driver, a *App, ns string) {
	t.Helper()
	d.press("q")
	d.until("the quit", 5*time.Second, func(*App) bool { return d.quit })
	a.shutdown()
	if left := walkWorkers(ns); len(left) > 0 {
		t.Errorf("lab worker processes of namespace %s outlived the lab: %s", ns, strings.Join(left, "; "))
	}
}

// walkWorkers lists live `lab worker` processes whose environment names
// namespace ns, as "pid: cmdline".
func walkWorkers(ns string) []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil // not Linux: nothing to look at
	}
	var out []string
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cmd, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		if len(args) < 2 || filepath.Base(args[0]) != "lab" || args[1] != "worker" {
			continue
		}
		environ, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, environ...), []byte("\x00LAB_NAMESPACE="+ns+"\x00")) {
			continue
		}
		state := ""
		if stat, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
				state = " state " + string(stat[i+2])
			}
		}
		out = append(out, fmt.Sprintf("%d%s: %s", pid, state, strings.Join(args, " ")))
	}
	return out
}

// A learner who reads for 90 s before each menu walks lesson 5 on the
// screen to its end: B's INSERT waits on A's lock while the menu "How does
// A's transaction end?" is open, and InnoDB's 50 s ended it with 1205.
// Slow by design: LAB_SLOW_READER=90s runs it (CI's second matrix does,
// beside the replays).
func TestASlowReaderWalksTheLockWaitLessonToItsEnd(t *testing.T) {
	v := os.Getenv("LAB_SLOW_READER")
	if v == "" {
		t.Skip("LAB_SLOW_READER=90s runs it: it reads for that long before each menu")
	}
	pause, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("LAB_SLOW_READER=%q: %v", v, err)
	}
	env := walkEnv(t)
	env.Replay = false // the screen's sessions, with their lock wait
	ls, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	l := labs.Find(ls, "idem-concurrent-insert")
	if l == nil {
		t.Fatal("no lesson idem-concurrent-insert")
	}
	walkLesson(t, env, "", "en", l, false, false, pause)
}

// Only what a lesson needs blocks it: lesson 1 meets MySQL alone, and runs
// to its end by keys with RabbitMQ unreachable (its Queues panel says so).
func TestLessonOneRunsToItsEndWithTheBrokerUnreachable(t *testing.T) {
	svc := *labtest.Connect(t).Svc
	svc.Config.AMQP = "amqp://guest:guest@127.0.0.1:1/"
	svc.Info.AMQPErr = errors.New("cannot reach RabbitMQ at 127.0.0.1:1")
	env := &steps.Env{Svc: &svc, Binary: labBinary(t), Queues: broker.QueueReader(&svc), Replay: true}
	ls, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	walkLesson(t, env, "", "en", labs.Find(ls, "1"), false, false)
}

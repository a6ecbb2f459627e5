package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/steps"
)

// The walk's lanes (walkLanes) are its only parallel tests: each mostly
// waits on workers and brokers.
func TestMain(m *testing.M) { labtest.MainParallel(m, walkLanes) }

// realEnv connects to the real MariaDB, RabbitMQ and Redis in a namespace of
// the test's own (labtest), whatever else runs against the same servers.
func realEnv(t testing.TB) *steps.Env {
	t.Helper()
	return &steps.Env{Svc: labtest.Connect(t).Svc}
}

// lessonCopy copies built-in lessons (both languages) to a temp lesson
// directory, so the test runs the real lesson while lessons being written
// next to it cannot break it.
func lessonCopy(t testing.TB, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, lang := range []string{"en", "zh"} {
		if err := os.MkdirAll(filepath.Join(dir, lang), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join("..", "labs", lang, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, lang, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// snap is what the e2e test reads of the model, copied on the program's
// goroutine after every message.
type snap struct {
	lesson        string
	next, total   int
	running, done bool
	passed        bool
	why           string
	tables        string
}

// watcher keeps the latest snapshot and wakes a waiting test.
type watcher struct {
	mu   sync.Mutex
	last snap
	wake chan struct{}
}

func (w *watcher) observe(a *App) {
	s := snap{tables: plainView(a.panels.tables.View())}
	if x := a.sess; x != nil {
		s.lesson, s.next, s.total, s.running, s.done = x.lessonID, x.next, len(x.steps), x.running, x.Done()
		s.passed = true
		for i := x.next - 1; i >= 0; i-- {
			if r, ok := x.results[i]; ok && !r.Skipped {
				s.passed, s.why = r.Passed, r.Why
				break
			}
		}
	}
	w.mu.Lock()
	w.last = s
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) until(t testing.TB, what string, timeout time.Duration, cond func(snap) bool) snap {
	t.Helper()
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		s := w.last
		w.mu.Unlock()
		if cond(s) {
			return s
		}
		select {
		case <-w.wake:
		case <-deadline:
			t.Fatalf("timed out after %s waiting for %s; last: %+v", timeout, what, s)
		}
	}
}

// tableRow reports whether the tables panel shows a row of table with
// these cells; changed=true asks for the "+" mark of the last step.
func tableRow(view, table string, changed bool, cells ...string) bool {
	in := false
	for _, line := range strings.Split(view, "\n") {
		line = strings.Trim(line, "│ ")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.HasPrefix(line, table+" ") {
			in = true
			continue
		}
		if in && strings.Contains(line, " blog_") { // the next table's title
			in = false
		}
		if !in {
			continue
		}
		mark := f[0] == "+"
		if mark {
			f = f[1:]
		}
		if mark == changed && strings.Join(f, " ") == strings.Join(cells, " ") {
			return true
		}
	}
	return false
}

// TestWalkFirstProcessingLessonWithKeysShowsUser7At10 drives the real
// program (teatest: a tea.Program with a fake terminal) through the
// built-in idem-first-processing lesson with the enter key alone, against
// the real MariaDB, and reads the table panel: user 7 goes from 0 to 10 on
// the first processing, marked as changed by that step.
func TestWalkFirstProcessingLessonWithKeysShowsUser7At10(t *testing.T) {
	env := realEnv(t)
	progressFile := filepath.Join(t.TempDir(), "progress.json")
	setEnv(t, progress.Env, progressFile)
	a, err := newApp(context.Background(), Options{Env: env, Lang: "en", Start: "idem-first-processing",
		LessonsDir: lessonCopy(t, "01-idem-first-processing.md")})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{wake: make(chan struct{}, 1)}
	a.observe = w.observe
	tm := teatest.NewTestModel(t, a, teatest.WithInitialTermSize(200, 60),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))

	s := w.until(t, "the lesson to open", 5*time.Second, func(s snap) bool {
		return s.lesson == "idem-first-processing" && !s.running && s.total > 0
	})
	for !s.done {
		prev := s.next
		tm.Send(keyMsg("enter"))
		s = w.until(t, "step to finish", 60*time.Second, func(s snap) bool { return !s.running && s.next > prev })
		if !s.passed {
			t.Fatalf("step %d failed: %s", prev+1, s.why)
		}
		switch prev {
		case 0: // the reset: user 7 starts with 0 points
			// (marked or not: whether a row was there before depends on
			// what the last run left and on the first poll's timing)
			w.until(t, "user 7 at 0 after the reset", 5*time.Second, func(s snap) bool {
				return tableRow(s.tables, "points_account", true, "7", "0") ||
					tableRow(s.tables, "points_account", false, "7", "0")
			})
		case 1: // the first processing: 0 -> 10, marked as changed
			s = w.until(t, "user 7 at 10, marked", 5*time.Second, func(s snap) bool {
				return tableRow(s.tables, "points_account", true, "7", "10")
			})
			if tableRow(s.tables, "points_account", false, "7", "0") {
				t.Errorf("the old row is still shown:\n%s", s.tables)
			}
		}
	}
	// At the end user 7 has 20: the client that carries on after its 1062
	// paid order 42 a second time (the lesson's unsafe ledger, duplicated).
	s = w.until(t, "the final tables", 5*time.Second, func(s snap) bool {
		return tableRow(s.tables, "points_account", false, "7", "20") &&
			tableRow(s.tables, "points_account", false, "8", "0")
	})
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	final := tm.FinalModel(t).(*App)
	final.shutdown()

	if v := final.panels.ledger.View(); !strings.Contains(v, "lost") || !strings.Contains(v, "applied once") || !strings.Contains(v, "duplicated") {
		t.Errorf("ledger after the lesson:\n%s", plainView(v))
	}
	if n := len(final.sess.run.Sessions()); n != 0 {
		t.Errorf("%d SQL sessions still open after quit", n)
	}
	p, err := progress.Load(progressFile)
	if err != nil {
		t.Fatal(err)
	}
	if lp := p.Lessons["idem-first-processing"]; lp == nil || !lp.Done || lp.Step != s.total {
		t.Errorf("progress after the lesson: %+v", lp)
	}
	if _, err := os.Stat(progressFile); err != nil {
		t.Error(err)
	}
}

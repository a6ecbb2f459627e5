package ui

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/worker"
)

// labBinary is cmd/lab, built once per test process: workers are `lab
// worker KIND` processes.
func labBinary(t *testing.T) string { return labtest.Lab(t) }

func workerState(a *App, name string) (worker.Status, bool) {
	for _, w := range a.panels.workers.statuses {
		if w.Name == name {
			return w, true
		}
	}
	return worker.Status{}, false
}

// TestKillAndContinueRealWorkersAndNoneOutlivesTheLab runs three real
// consumer processes paused before their COMMIT: k SIGKILLs the selected
// one, c lets the next one finish, and quitting kills the third.
func TestKillAndContinueRealWorkersAndNoneOutlivesTheLab(t *testing.T) {
	env := realEnv(t)
	env.Binary = labBinary(t)
	setEnv(t, progress.Env, filepath.Join(t.TempDir(), "progress.json"))
	a, err := newApp(context.Background(), Options{Env: env, Lang: "en", Start: "fixture-workers", LessonsDir: "testdata/worker-lessons"})
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, a)
	d.handle(tea.WindowSizeMsg{Width: 120, Height: 40})
	d.until("the lesson", 5*time.Second, idle)
	for !a.sess.Done() {
		prev := a.sess.next
		d.press("enter")
		d.until("a step", 60*time.Second, func(a *App) bool { return idle(a) && a.sess.next > prev })
		if r := a.sess.results[prev]; !r.Passed {
			t.Fatalf("step %d failed: %s", prev+1, r.Why)
		}
	}
	d.until("three paused workers", 5*time.Second, func(a *App) bool {
		n := 0
		for _, w := range a.panels.workers.statuses {
			if w.State == worker.Paused {
				n++
			}
		}
		return n == 3
	})
	d.press("k") // brings the worker panel forward; c1 is selected
	d.until("c1 killed", 10*time.Second, func(a *App) bool {
		w, _ := workerState(a, "c1")
		return w.State == worker.Killed && w.Point == "before-commit"
	})
	d.press("down")
	d.press("c")
	d.until("c2 to finish", 15*time.Second, func(a *App) bool {
		w, _ := workerState(a, "c2")
		return w.State == worker.Exited
	})
	c3, _ := workerState(a, "c3")
	if c3.State != worker.Paused || c3.PID == 0 {
		t.Fatalf("c3 = %+v, want paused", c3)
	}
	d.press("q")
	a.shutdown()
	if err := syscall.Kill(c3.PID, 0); err == nil {
		t.Errorf("worker c3 (pid %d) outlived the lab", c3.PID)
	}
}

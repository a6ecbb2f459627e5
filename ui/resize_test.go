package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
)

// A resize keeps the learner's place: in lesson 24 with relay A paused,
// 120x40 → 60x20 → 120x40 keeps the step the header names, keeps the text
// at the same step's result, and the footer keeps k and c while a worker
// waits for them.
func TestAResizeKeepsTheStepTheTextAndThePausedWorkersKeys(t *testing.T) {
	env := walkEnv(t)
	ls, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	a, d := openLessonAt(t, env, labs.Find(ls, "24").ID, 120, 40)
	s := a.sess
	for !a.workerPaused() {
		if s.Done() {
			t.Fatal("lesson 24 ended with no worker paused")
		}
		runNextTaking(d, "after-confirm")
		time.Sleep(2 * pollEvery) // the workers panel is polled
	}
	// Read back a little, as a learner does, so the place is not the end.
	a.lesson.ShowStep(s.next - 1)
	d.press("up")
	want, header := a.lesson.topStep(), fmt.Sprintf(a.c.t().PaneStep, s.next+1, len(s.steps))
	if want < 0 {
		t.Fatal("the text is above every step's result: nothing to keep")
	}
	for _, sz := range [][2]int{{60, 20}, {80, 24}, {120, 40}} {
		d.handle(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		frame := plainView(a.render())
		at := fmt.Sprintf("at %dx%d", sz[0], sz[1])
		if got := a.lesson.topStep(); got != want {
			t.Errorf("%s the text moved from step %d's result to step %d's", at, want+1, got+1)
		}
		if !strings.Contains(squash(frame), squash(strings.TrimSpace(header))) {
			t.Errorf("%s the header lost %q:\n%s", at, header, frame)
		}
		foot := frame[strings.LastIndex(frame, "\n")+1:]
		for _, k := range []string{"k kill", "c continue"} {
			if !strings.Contains(foot, k) {
				t.Errorf("%s the footer lost %q while a worker is paused: %q", at, k, foot)
			}
		}
	}
}

// The paused worker's keys move up in both languages, the rest in order.
func TestPausedFirstMovesKillAndContinueAfterEnter(t *testing.T) {
	for _, tx := range []*text{&textEN, &textZH} {
		h := pausedFirst(tx.HintsLesson)
		if !strings.HasPrefix(h[1], "k ") || !strings.HasPrefix(h[2], "c ") || len(h) != len(tx.HintsLesson) || h[0] != tx.HintsLesson[0] || h[3] != tx.HintsLesson[1] {
			t.Errorf("%v", h)
		}
	}
}

// w before a run's first step takes replay's short waits for the whole run:
// the steps shown carry the values the servers will get (lesson 24's 40 s
// lease is 4 s); after a step ran, w says r starts over.
func TestShortWaitsBeforeTheFirstStepShowTheValuesSent(t *testing.T) {
	setEnv(t, progress.Env, filepath.Join(t.TempDir(), "progress.json"))
	a, err := newApp(context.Background(), Options{Env: &steps.Env{}, Lang: "en", Start: "24"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.shutdown)
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	// The sleep step's duration as the run will send and show it.
	var sleep string
	for _, st := range a.sess.steps {
		if st.Kind == "sleep" {
			sleep = st.Attrs["for"]
			break
		}
	}
	waits := func() string { return a.sess.run.Expand(sleep) }
	if waits() != "40s" {
		t.Fatalf("lesson 24's first sleep is %q (%q), not 40s", waits(), sleep)
	}
	a.press("w")
	if !a.sess.run.Short || waits() != "4s" {
		t.Fatalf("after w: short %v, sleep %s, status %q", a.sess.run.Short, waits(), a.status)
	}
	if a.status != a.c.t().ShortOn {
		t.Errorf("status %q", a.status)
	}
	a.press("w")
	if a.sess.run.Short || waits() != "40s" {
		t.Fatal("w again did not give back the article's waits")
	}
	a.sess.next = 1 // as after a step
	a.press("w")
	if a.sess.run.Short || a.status != a.c.t().ShortLater {
		t.Errorf("w after a step: short %v, status %q", a.sess.run.Short, a.status)
	}
}

package ui

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
)

// TestPredictMenuMatchesGoldenFile pins a predict step's menu (the answer
// stays hidden: no answer= in the step's title) and, after the learner
// picked the wrong option, its result in the lesson pane.
func TestPredictMenuMatchesGoldenFile(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			a := newTestApp(t, fakeEnv(), lang, "fixture-predict", 100, 30)
			v := plainView(a.render())
			if strings.Contains(v, "answer=") {
				t.Errorf("the menu gives the answer away:\n%s", v)
			}
			golden(t, "screen_predict_"+lang+"_100x30", ascii(a.render()))

			s := a.sess
			s.take(s.pendingChoice()) // the cursor is on "yes"
			s.results[0] = lab.Result{Kind: "predict", Passed: true, Observed: "(shown by the pane)"}
			s.next = 1
			a.lesson.Rebuild()
			a.lesson.Bottom()
			golden(t, "screen_predict_result_"+lang+"_100x30", ascii(a.render()))
		})
	}
}

// TestPredictStepTakesThePickWithoutBranching runs fixture-predict with the
// keys: the pick is remembered (not a path), every step runs, the result
// says the prediction differs from the article's answer, and the progress
// keeps the pick for a resume.
func TestPredictStepTakesThePickWithoutBranching(t *testing.T) {
	setEnv(t, progress.Env, t.TempDir()+"/progress.json")
	a := newTestApp(t, nil, "en", "fixture-predict", 100, 30)
	d := newDriver(t, a)
	d.until("the lesson to open", 2*time.Second, idle)
	if a.sess.pendingChoice() == nil {
		t.Fatal("no menu at the predict step")
	}
	// Nothing is preselected: enter alone predicts nothing and says so.
	d.press("enter")
	if a.sess.next != 0 || a.sess.running || !strings.Contains(a.status, "pick your prediction first") {
		t.Fatalf("enter with no option picked: next %d, status %q", a.sess.next, a.status)
	}
	d.press("down") // the first option, "yes"
	for !a.sess.Done() {
		prev := a.sess.next
		d.press("enter")
		d.until("the step to finish", 5*time.Second, func(a *App) bool { return idle(a) && a.sess.next > prev })
	}
	s := a.sess
	if got := s.run.Predictions["confirm"]; got != "yes" || len(s.run.Choices) != 0 {
		t.Fatalf("Predictions = %v, Choices = %v; want confirm=yes and no choice", s.run.Predictions, s.run.Choices)
	}
	for i := range s.steps {
		if r := s.results[i]; !r.Passed || r.Skipped {
			t.Errorf("step %d: %+v", i+1, r)
		}
	}
	if r := s.results[0]; !strings.Contains(r.Observed, "you predicted yes") || !strings.Contains(r.Observed, "the article's answer: no") {
		t.Errorf("predict observed %q", r.Observed)
	}
	a.lesson.Top()
	v := plainView(a.lesson.View())
	for _, want := range []string{"you predicted yes:", "the article's answer: no:", "not the article's answer"} {
		if !strings.Contains(v, want) {
			t.Errorf("lesson pane lacks %q:\n%s", want, v)
		}
	}
	a.shutdown()
	p, err := progress.Load(os.Getenv(progress.Env))
	if err != nil {
		t.Fatal(err)
	}
	if lp := p.Lessons["fixture-predict"]; lp == nil || lp.Predictions["confirm"] != "yes" || len(lp.Choices) != 0 {
		t.Errorf("progress = %+v, want predictions confirm=yes", lp)
	}
}

// TestPredictDoesNotMultiplyReplayPaths: replay runs a lesson once per
// combination of choices; predict steps add none and, with no learner,
// take the article's answer.
func TestPredictDoesNotMultiplyReplayPaths(t *testing.T) {
	ls, err := labs.LoadDir(fixtureLessons, "en")
	if err != nil {
		t.Fatal(err)
	}
	l := labs.Find(ls, "fixture-predict")
	if n := len(steps.Paths(l)); n != 1 {
		t.Fatalf("%d replay paths, want 1", n)
	}
	r := steps.NewRun(&steps.Env{Replay: true}, l, nil)
	defer r.Close()
	res := r.Step(context.Background(), l.Steps()[0])
	if !res.Passed || res.Option != "" || !strings.Contains(res.Observed, "the article's answer: no: no, the confirm is the broker's hand-off only") {
		t.Errorf("replay predict: %+v", res)
	}
}

func TestPredictStepCheckRejectsABadAnswer(t *testing.T) {
	k, ok := steps.Lookup("predict")
	if !ok {
		t.Fatal("predict is not registered")
	}
	mk := func(attrs map[string]string, body string) *lab.Step {
		return &lab.Step{Kind: "predict", Attrs: attrs, Body: body, File: "x.md", Line: 7}
	}
	body := "yes: it was handled\nno: the broker's hand-off only\n"
	cases := map[string]*lab.Step{
		"answer not an option": mk(map[string]string{"name": "q", "answer": "maybe"}, body),
		"no answer":            mk(map[string]string{"name": "q"}, body),
		"one option":           mk(map[string]string{"name": "q", "answer": "yes"}, "yes: only\n"),
		"duplicate option":     mk(map[string]string{"name": "q", "answer": "yes"}, "yes: a\nyes: b\n"),
		"unknown attribute":    mk(map[string]string{"name": "q", "answer": "yes", "pick": "no"}, body),
	}
	for name, s := range cases {
		if err := k.Check(s); err == nil || !strings.Contains(err.Error(), "x.md:7") {
			t.Errorf("%s: Check = %v, want an error at x.md:7", name, err)
		}
	}
	if err := k.Check(mk(map[string]string{"name": "q", "answer": "no", "prompt": "?"}, body)); err != nil {
		t.Errorf("a good step: %v", err)
	}
}

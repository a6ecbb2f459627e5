package ui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/steps"
)

// challengeApp is the screen on the built-in lessons, which the challenges
// close, opened on challenge once.
func challengeApp(t *testing.T, runPrograms bool) (*App, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "progress.json")
	setEnv(t, progress.Env, file)
	a, err := newApp(context.Background(), Options{Env: &steps.Env{}, Lang: "en", Start: "challenge-once", RunPrograms: runPrograms})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.shutdown)
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return a, file
}

func press(a *App, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		default:
			r := []rune(k)
			msg = tea.KeyPressMsg{Code: r[0], Text: k}
		}
		a.Update(msg)
	}
}

func TestTheChallengesCloseTheListAndPSetsTheProgramTheStepRuns(t *testing.T) {
	a, file := challengeApp(t, true)
	if a.openChallenge() != "once" {
		t.Fatalf("open: %q, want challenge once", a.openChallenge())
	}
	a.focus = focusList
	a.relayout()
	if v := ascii(a.render()); !strings.Contains(v, "Challenges: you write the code") {
		t.Errorf("the list has no challenges part:\n%s", v)
	}
	a.focus = focusLesson
	press(a, "p")
	if !a.prompt.open || !strings.Contains(ascii(a.render()), "the command that runs your program for once") {
		t.Fatalf("p opened no prompt:\n%s", ascii(a.render()))
	}
	press(a, "enter")
	if !a.prompt.open {
		t.Fatal("an empty command was taken")
	}
	for _, r := range "python3 'my consumer.py' --fast" {
		press(a, string(r))
	}
	press(a, "enter")
	if a.prompt.open {
		t.Fatal("enter did not close the prompt")
	}
	argv, dir, seed := a.c.env.Programs.Program("once")
	if strings.Join(argv, "|") != "python3|my consumer.py|--fast" || dir == "" || seed != 1 {
		t.Fatalf("the step would run %q in %q under seed %d", argv, dir, seed)
	}
	a.c.env.Programs.Ran("once", 1, true, "seed 1: passed")
	if _, _, seed := a.c.env.Programs.Program("once"); seed != 2 {
		t.Errorf("after a pass under seed 1 the next run is under seed %d, want 2", seed)
	}
	a.shutdown()
	a.saver.fold(a.c.progress)
	cmd := a.saver.save(a.c.progress)
	if cmd != nil {
		cmd()
	}
	p, err := progress.Load(file)
	if err != nil || p.Challenges["once"] == nil || !p.Challenges["once"].Passed || len(p.Challenges["once"].Command) != 3 {
		t.Fatalf("the program and the pass were not kept: %+v %v", p.Challenges["once"], err)
	}
	// Esc cancels an edit and keeps what was set.
	b, _ := challengeApp(t, true)
	press(b, "p", "x", "esc")
	if argv, _, _ := b.c.env.Programs.Program("once"); len(argv) != 0 {
		t.Errorf("esc kept %q", argv)
	}
}

func TestAWorkshopScreenRunsNoProgramAndSaysWhereToRunIt(t *testing.T) {
	a, _ := challengeApp(t, false)
	press(a, "p")
	if a.prompt.open || !strings.Contains(a.status, "runs no program of yours") {
		t.Fatalf("p on a workshop's screen: prompt %t, status %q", a.prompt.open, a.status)
	}
	k, _ := steps.Lookup("challenge")
	res := k.Run(context.Background(), steps.NewRun(a.c.env, a.sess.run.Lesson, nil), a.sess.steps[0])
	if res.Passed || !strings.Contains(res.Why+res.Observed, "--workshop YOU@HOST:PORT") {
		t.Fatalf("the challenge step on a workshop's screen: %+v", res)
	}
}

// A challenge's header says challenge, not lesson, and a run that failed
// does not end it as complete.
func TestAFailedChallengeRunIsNotCalledCompleteAndItsHeaderSaysChallenge(t *testing.T) {
	a, _ := challengeApp(t, true)
	a.focus = focusLesson
	a.relayout()
	if v := ascii(a.render()); !strings.Contains(v, "challenge 1: ") || strings.Contains(v, "lesson 1: ") {
		t.Errorf("the header does not say challenge 1:\n%s", v)
	}
	a.sess.results[0] = lab.Result{Passed: false, Why: "the challenge failed: lost"}
	a.sess.next = len(a.sess.steps)
	v := ascii(a.render())
	if strings.Contains(v, "Lesson complete") || !strings.Contains(v, "Not passed yet.") {
		t.Errorf("a failed challenge run reads:\n%s", v)
	}
	press(a, "enter")
	if !strings.Contains(a.status, "not passed yet") {
		t.Errorf("enter after a failed run says %q", a.status)
	}
	a.sess.results[0] = lab.Result{Passed: true}
	if v := ascii(a.render()); !strings.Contains(v, "Lesson complete") {
		t.Errorf("a passed challenge run reads:\n%s", v)
	}
}

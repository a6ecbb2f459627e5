package steps_test

import (
	"context"
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/steps"
)

func serverLesson(steps ...*lab.Step) *lab.Lesson {
	l := &lab.Lesson{ID: "t"}
	for _, s := range steps {
		l.Blocks = append(l.Blocks, lab.Block{Step: s})
	}
	return l
}

// A server step is checked (a fact the lab reads, options on and off) and
// is no branch of replay: the server the run meets takes its path, from
// the run's start, over what a resumed lesson had saved.
func TestAServerStepTakesTheServersPathAndIsNoReplayBranch(t *testing.T) {
	server, _ := steps.Lookup("server")
	good := step("server", "name=snap fact=snapshot-isolation", "off: the newest row\non: error 1020")
	if err := server.Check(good); err != nil {
		t.Fatalf("a good server step: %v", err)
	}
	for _, bad := range []*lab.Step{
		step("server", "name=snap fact=snapshot", "off: a\non: b"),
		step("server", "name=snap fact=snapshot-isolation", "yes: a\nno: b"),
		step("server", "name=snap fact=snapshot-isolation", "off: a"),
		step("server", "fact=snapshot-isolation", "off: a\non: b"),
	} {
		if err := server.Check(bad); err == nil {
			t.Errorf("server step %v %q passed the check", bad.Attrs, bad.Body)
		}
	}
	choice := step("choice", "name=winner", "commit: a\nrollback: b")
	l := serverLesson(choice, good, step("sql", "when=snap:on", "SELECT 1"))
	if n := len(steps.Paths(l)); n != 2 {
		t.Errorf("replay runs %d paths, want 2 (the choice's; the server decides its step)", n)
	}
	if _, ok := steps.Choices(l)["snap"]; !ok {
		t.Error("when=snap:on names no choice: the server step is not among Choices")
	}
	for _, on := range []bool{false, true} {
		svc := &services.Services{}
		svc.Info.SnapshotIsolation = on
		want := map[bool]string{false: "off", true: "on"}[on]
		r := steps.NewRun(&steps.Env{Svc: svc}, l, map[string]string{"winner": "commit", "snap": "elsewhere"})
		if got := r.Choices["snap"]; got != want {
			t.Errorf("snapshot isolation %t: the run took %q, want %q", on, got, want)
		}
		if r.Choices["winner"] != "commit" {
			t.Errorf("the learner's choice was changed: %v", r.Choices)
		}
		if r.Applies(l.Steps()[2]) != on {
			t.Errorf("snapshot isolation %t: the when=snap:on step applies %t", on, !on)
		}
		res := server.Run(context.Background(), r, good)
		if !res.Passed || !strings.Contains(res.Observed, "snap → "+want) {
			t.Errorf("the step shows %+v", res)
		}
	}
}

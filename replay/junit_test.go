package replay_test

import (
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/replay"
)

// An interrupted lesson (every step it ran passed) is a failure in the
// JUnit file too: it used to carry no <failure>, so CI saw it pass.
func TestAnInterruptedLessonIsAFailureInJUnit(t *testing.T) {
	rep := replay.Report{Lessons: []replay.LessonReport{
		{ID: "done", Number: 1, Passed: true, Steps: []lab.Result{{Kind: "sql", Passed: true}}},
		{ID: "cut", Number: 2, Passed: false, Why: "interrupted", Steps: []lab.Result{{Kind: "sql", Passed: true}}},
	}, Passed: 1, Failed: 1}
	var b strings.Builder
	if err := rep.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	x := b.String()
	if strings.Count(x, "<failure") != 1 || !strings.Contains(x, `message="interrupted"`) {
		t.Fatalf("want one failure, the interrupted lesson's:\n%s", x)
	}
	if !strings.Contains(x, `failures="1"`) {
		t.Fatalf("the suites do not count the failure:\n%s", x)
	}
}

package replay_test

import (
	"context"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/replay"
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

// A step that skipped itself (here a nodes stop with no nodes of the
// lesson's own) makes the lesson SKIPPED: not passed, not failed, and said
// so in the summary and as <skipped> in JUnit. It used to print PASS.
func TestALessonThatSkippedACheckIsSkippedNotPassed(t *testing.T) {
	st := &lab.Step{Kind: "nodes", Attrs: map[string]string{"stop": "1"}, File: "skips.md", Line: 9}
	l := &lab.Lesson{ID: "skips", Number: 1, Part: lab.PartBroker, File: "skips.md", Blocks: []lab.Block{{Step: st}}}
	rep := replay.Run(context.Background(), env(t), []*lab.Lesson{l}, replay.Options{StepTimeout: time.Minute})
	lr := rep.Lessons[0]
	if lr.Passed || !lr.Skipped || rep.Passed != 0 || rep.Failed != 0 || rep.Skipped != 1 {
		t.Fatalf("want one skipped lesson: %+v", rep)
	}
	if !strings.Contains(lr.Why, "skips.md:9 nodes skipped") || !strings.Contains(rep.Summary(), "1 skipped (skips") {
		t.Errorf("why %q, summary %q", lr.Why, rep.Summary())
	}
	var b strings.Builder
	if err := rep.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	if x := b.String(); strings.Contains(x, "<failure") || !strings.Contains(x, `skipped="2"`) {
		t.Errorf("want the step and the lesson skipped, no failure:\n%s", x)
	}
	// A failure on another path still fails the lesson.
	bad := &lab.Step{Kind: "nodes", Attrs: map[string]string{"stop": "1"}, File: "skips.md", Line: 9}
	fails := &lab.Step{Kind: "expect", Body: "ok", File: "skips.md", Line: 12}
	l2 := &lab.Lesson{ID: "fails", Number: 2, Part: lab.PartBroker, File: "skips.md", Blocks: []lab.Block{{Step: bad}, {Step: fails}}}
	if lr := replay.Lesson(context.Background(), env(t), l2, replay.Options{StepTimeout: time.Minute}); lr.Passed || lr.Skipped {
		t.Errorf("a lesson that skipped one step and failed another: %+v", lr)
	}
}

// What a server or a program answered, quoted in the JUnit file and the
// transcript, holds no escape, C1 control or bidi override there (CI logs
// print both), and the text around each survives.
func TestTheReportsFilesQuoteOutsideTextPlain(t *testing.T) {
	hostile := "row a\x1b]2;title\x07b \u009b2J c\u202ed \x1b[2Je"
	rep := replay.Report{Lessons: []replay.LessonReport{{ID: "evil", Number: 1, Title: "T" + hostile, Why: hostile,
		Steps: []lab.Result{{Kind: "expect", Sent: []string{"SELECT 1" + hostile}, Observed: hostile, Why: "value is " + hostile}}}}, Failed: 1}
	var j, tr strings.Builder
	if err := rep.WriteJUnit(&j); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteTranscript(&tr); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"JUnit": j.String(), "transcript": tr.String()} {
		for _, r := range out {
			if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e' || r == '\ufffd') {
				t.Errorf("the %s holds %U:\n%q", name, r, out)
				break
			}
		}
		if !strings.Contains(out, "row ab") || !strings.Contains(out, "cd") {
			t.Errorf("the %s lost the text around the escapes:\n%s", name, out)
		}
	}
	if err := xml.Unmarshal([]byte(strings.TrimPrefix(j.String(), xml.Header)), new(struct{})); err != nil {
		t.Errorf("the JUnit file is no longer XML: %v", err)
	}
}

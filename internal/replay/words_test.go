package replay

import (
	"strings"
	"testing"

	"github.com/rmlab/lab"
)

// The lines a person reads during `lab replay --lang zh` are Chinese; the
// reports (JSON, JUnit, transcript) stay English for the tools that read them.
func TestAChineseReplaySaysItsVerdictsAndSummaryInChinese(t *testing.T) {
	rep := Report{Passed: 1, Failed: 1, Skipped: 1, Lessons: []LessonReport{
		{ID: "a", Passed: true}, {ID: "b", Why: "expect failed"}, {ID: "c", Skipped: true},
	}}
	for _, c := range []struct{ lang, want string }{
		{"zh", "1 课通过，1 课失败（b），1 课跳过（c：没有跑完每一项检查；lab doctor 会说原因）"},
		{"en", "1 passed, 1 failed (b), 1 skipped (c: not every check ran; lab doctor says why)"},
	} {
		if got := rep.SummaryIn(c.lang); got != c.want {
			t.Errorf("%s summary %q, want %q", c.lang, got, c.want)
		}
	}
	if rep.Summary() != rep.SummaryIn("en") {
		t.Errorf("Summary() %q is not the English one", rep.Summary())
	}
	l := &lab.Lesson{Number: 2, ID: "b"}
	for _, c := range []struct {
		lang string
		lr   LessonReport
		want string
	}{
		{"zh", LessonReport{Passed: true, DurationMS: 1500}, "通过  2 b"},
		{"zh", LessonReport{Why: "x"}, "失败  2 b"},
		{"zh", LessonReport{Skipped: true}, "跳过  2 b"},
		{"en", LessonReport{Passed: true}, "PASS  2 b"},
	} {
		var line string
		progress(Options{Lang: c.lang, Progress: func(s string) { line = s }}, l, c.lr, 1, 1)
		if !strings.HasPrefix(line, c.want) {
			t.Errorf("%s progress line %q, want it to begin %q", c.lang, line, c.want)
		}
	}
}

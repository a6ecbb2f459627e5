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

// A step's why the lab wrote itself (a wait that ran out) is said in
// Chinese in a Chinese replay's progress line, after its file and line; a
// server's or a program's words are left as they came.
func TestAChineseReplaySaysAWaitThatRanOutInChinese(t *testing.T) {
	for _, c := range []struct{ lang, why, want string }{
		{"zh", "labs/zh/18.md:232 wait: waited 30s for c7 to exit: it is running, last point none",
			"labs/zh/18.md:232 wait: 等待 c7 退出 30s 仍未等到：它的状态是 running，最后到达的点是 none"},
		{"en", "labs/en/18.md:232 wait: waited 30s for c7 to exit: it is running, last point none",
			"labs/en/18.md:232 wait: waited 30s for c7 to exit: it is running, last point none"},
		{"zh", "labs/zh/1.md:9 sql: Error 1146: Table 'x' doesn't exist", "labs/zh/1.md:9 sql: Error 1146: Table 'x' doesn't exist"},
	} {
		if got := whyIn(c.lang, c.why); got != c.want {
			t.Errorf("%s: %q\nwant %q", c.lang, got, c.want)
		}
	}
}

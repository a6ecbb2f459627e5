package ui

import (
	"strings"
	"testing"

	"github.com/rmlab/lab/steps"
)

// A result table wider than the pane becomes one record per row, every
// value beside its column's name; one that fits is left alone.
func TestAResultTableWiderThanThePaneBecomesRecords(t *testing.T) {
	table := steps.Table([]string{"queue", "ready", "state"},
		[][]string{{"orders.classic", "0", "unavailable: home node rabbit@n1 is down | or inaccessible"}, {"orders.quorum", "2", "积分 ok"}})
	lines := append(strings.Split(table, "\n"), "after")
	wide := displayWidth(lines[0])

	if got := reflowTables(lines, wide); strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("a table that fits was changed:\n%s", strings.Join(got, "\n"))
	}
	got := strings.Join(reflowTables(lines, wide-1), "\n")
	want := strings.Join([]string{
		"*** row 1 ***",
		"queue: orders.classic",
		"ready: 0",
		"state: unavailable: home node rabbit@n1 is down | or inaccessible",
		"*** row 2 ***",
		"queue: orders.quorum",
		"ready: 2",
		"state: 积分 ok",
		"2 rows in set",
		"after",
	}, "\n")
	if got != want {
		t.Errorf("reflowed:\n%s\nwant:\n%s", got, want)
	}
}

// Wrapped text never passes its width: lipgloss.Wrap left a line ending in
// " -" one cell too wide, and the pane cut its last letter for it.
func TestWrappedTextNeverPassesItsWidth(t *testing.T) {
	for _, s := range []string{
		"  NotifyClose +1.2ms: channel B closed by the broker: 406 PRECONDITION_FAILED - unknown delivery tag 5",
		"  contains claimed order-44-created-v1 with lease token worker-C-1234-5678 and more",
		"一段中文 with English - and a dash, 还有更多的中文字符在这里。",
	} {
		for w := 10; w < 100; w++ {
			for _, l := range wrapText(s, w) {
				if displayWidth(l) > w {
					t.Errorf("width %d: %q is %d cells", w, l, displayWidth(l))
				}
			}
		}
	}
}

// Code, SQL and flags wrap at spaces, never inside a token: prose
// wrapping broke after a hyphen and split --to into "-" and "-to"; a word
// wider than the pane is cut by width, and nothing is lost.
func TestCodeWrapsAtSpacesOnly(t *testing.T) {
	line := "  lab worker relay --name relay-A --pause-at claim-locked --unsafe-claim --once --routing-key orders.unsafe"
	for _, w := range []int{20, 33, 41, 80} {
		got := wrapCode(line, w)
		joined := strings.Join(got, " ")
		for _, tok := range strings.Fields(line) {
			if !strings.Contains(joined, tok) {
				t.Errorf("w=%d: %q was split or lost: %q", w, tok, got)
			}
		}
		for _, l := range got {
			if displayWidth(l) > w {
				t.Errorf("w=%d: %q is wider than the pane", w, l)
			}
		}
	}
	long := "  " + strings.Repeat("x", 50)
	got := wrapCode(long, 20)
	if strings.ReplaceAll(strings.Join(got, ""), " ", "") != strings.Repeat("x", 50) {
		t.Errorf("a word wider than the pane lost characters: %q", got)
	}
}

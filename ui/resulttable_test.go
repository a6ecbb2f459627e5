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

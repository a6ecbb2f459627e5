package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rmlab/lab/steps"
)

// The tables panel says in words what a missing database or table means
// (a lesson's CREATE TABLE comes later), not the driver's raw "Error 1146".
func TestAMissingTableOrDatabaseIsSaidInWords(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{steps.ErrNoTable, errNoTable},
		{fmt.Errorf("read: %w", steps.ErrNoDatabase), errNoDB},
		{fmt.Errorf("read: %w", context.DeadlineExceeded), errNoAnswer},
		{errors.New("Error 1045: Access denied\nmore"), "Error 1045: Access denied"},
	} {
		if got := shortErr(c.err); got != c.want {
			t.Errorf("%v: the panel says %q, want %q", c.err, got, c.want)
		}
	}
	if textZH.TableErrors[errNoTable] == "" || textZH.TableErrors[errNoTable] == errNoTable {
		t.Error("the Chinese screen has no words of its own for a table not created yet")
	}
}

// A paragraph of one path (<!-- when=fix:a -->) shows only on that path:
// lesson 10 told what a single active consumer did on the routing path.
func TestAParagraphOfOnePathShowsOnlyOnIt(t *testing.T) {
	prose := "Common.\n\n<!-- when=fix:a -->\nOnly on a.\n\n<!-- when=fix:b,c -->\nOn b or c.\n\nCommon again."
	s := &session{run: steps.NewRun(nil, nil, map[string]string{"fix": "b"})}
	got := onPath(prose, s)
	if want := "Common.\n\nOn b or c.\n\nCommon again."; got != want {
		t.Errorf("on path b: %q, want %q", got, want)
	}
	if got := onPath(prose, nil); strings.Contains(got, "<!--") || !strings.Contains(got, "Only on a.") || !strings.Contains(got, "On b or c.") {
		t.Errorf("before a run every paragraph shows, unmarked: %q", got)
	}
}

// The lab's own lines in a step's output are said in the screen's language;
// what came from a table or a program is not touched.
func TestTheLabsOwnStepLinesAreSaidInChinese(t *testing.T) {
	for in, want := range map[string]string{
		"recreated blog_idempotency_lab_alice from sql/idempotency/schema.sql": "已按 sql/idempotency/schema.sql 重建 blog_idempotency_lab_alice",
		"[B] waited 1.2s in all":                      "[B] 共等待 1.2s",
		"[B] Query OK, 1 row affected (waited 850ms)": "[B] Query OK, 1 row affected（等待 850ms）",
		"waited 3s": "等待了 3s",
		"waited 30s for c7 to exit: it is running, last point none":                  "等待 c7 退出 30s 仍未等到：它的状态是 running，最后到达的点是 none",
		"waited 30s for c3 to reach poisoned: it is exited, last point received (x)": "等待 c3 到达 poisoned 30s 仍未等到：它的状态是 exited，最后到达的点是 received (x)",
		"orders.quorum_t ready is 1, still not 2 after 10s":                          "orders.quorum_t 的 ready 为 1，10s 后仍不是 2",
		"recreated by a consumer":                                                    "recreated by a consumer", // a row's text
	} {
		if got := localObserved("zh", in); got != want {
			t.Errorf("zh %q: %q, want %q", in, got, want)
		}
		if got := localObserved("en", in); got != in {
			t.Errorf("en %q changed to %q", in, got)
		}
	}
}

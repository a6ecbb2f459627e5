package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
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

// The lab's own lines in a step's output are said in the screen's language
// (before the pane makes … and ← plain); what came from a table or a
// program is not touched.
func TestTheLabsOwnStepLinesAreSaidInChinese(t *testing.T) {
	for in, want := range map[string]string{
		"recreated blog_idempotency_lab_alice from sql/idempotency/schema.sql": "已按 sql/idempotency/schema.sql 重建 blog_idempotency_lab_alice",
		"[B] waited 1.2s in all":                      "[B] 共等待 1.2s",
		"[B] Query OK, 1 row affected (waited 850ms)": "[B] Query OK, 1 row affected（等待 850ms）",
		"waited 3s": "等待了 3s",
		"waited 30s for c7 to exit: it is running, last point none":                  "等待 c7 退出 30s 仍未等到：它的状态是 running，最后到达的点是 none",
		"waited 30s for c3 to reach poisoned: it is exited, last point received (x)": "等待 c3 到达 poisoned 30s 仍未等到：它的状态是 exited，最后到达的点是 received（x）",
		"orders.quorum_t ready is 1, still not 2 after 10s":                          "orders.quorum_t 的 ready 为 1，10s 后仍不是 2",
		"recreated by a consumer":                                                    "recreated by a consumer", // a row's text
		"… still waiting after 1s (blocked inside the server)":                       "… 已等待 1s 仍未完成（在服务器内阻塞）",
		"✓ value 10": "✓ 通过：value 10",
		"← basic.ack for publish seq 1 after 3ms: the broker took responsibility for the message":                   "← basic.ack（发布序号 1，3ms 后）：Broker 已为这条消息负责",
		"← basic.return 312 NO_ROUTE (exchange \"\", routing key \"x\", message-id m1): no queue took the message":  "← basic.return 312 NO_ROUTE（交换机 \"\"，路由键 \"x\"，message-id m1）：没有队列接收这条消息",
		"← no confirm: channel c1 closed first (cut); the library reports ack=false, which means unknown, not lost": "← 没有确认：通道 c1 先关闭了（cut）；客户端库报告 ack=false，意思是结果未知，不是丢失",
		"statement still waiting after 1s (a lock held by another session?)":                                        "语句等待 1s 后仍未完成（是否有其他会话持有锁？）",
	} {
		if got := localObserved("zh", in); got != want {
			t.Errorf("zh %q: %q, want %q", in, got, want)
		}
		if got := localObserved("en", in); got != in {
			t.Errorf("en %q changed to %q", in, got)
		}
	}
}

// The row the text around the step names (`order:43:paid`) is kept in
// view in a short pane, before a row the step changed, and the rows left
// out are counted in the title.
func TestTheRowTheTextNamesIsInViewAndTheRestCounted(t *testing.T) {
	st := &lab.Step{Kind: "sql", Body: "INSERT ..."}
	l := &lab.Lesson{Blocks: []lab.Block{{Prose: "The mark `order:43:paid` turns the retry away; `points_account` is not a value (has none)."}, {Step: st}}}
	focus := namedValues(l, st)
	if !slices.Contains(focus, "order:43:paid") {
		t.Fatalf("the values the text names: %q", focus)
	}
	a := newTestApp(t, nil, "en", "fixture-choice", 80, 24)
	p := a.panels.tables
	var rows [][]string
	for i := 40; i <= 49; i++ {
		rows = append(rows, []string{"points-award", fmt.Sprintf("order:%d:paid", i)})
	}
	p.data = []tableData{{title: "consumed_operation", db: "blog_idempotency_lab", cols: []string{"consumer_name", "business_key"}, rows: rows}}
	p.base = map[string]map[string]bool{"consumed_operation": {}}
	for _, r := range rows[:9] {
		p.base["consumed_operation"][strings.Join(r, "\x1f")] = true
	} // order:49 changed
	p.focus = focus
	got := plainView(strings.Join(p.render(4), "\n"))
	if !strings.Contains(got, "order:43:paid") || !strings.Contains(got, "of 10") {
		t.Fatalf("a 4-line pane:\n%s", got)
	}
	p.focus = nil
	if got := plainView(strings.Join(p.render(4), "\n")); !strings.Contains(got, "order:49:paid") || strings.Contains(got, "order:43:paid") {
		t.Fatalf("with nothing named, the changed row is in view:\n%s", got)
	}
}

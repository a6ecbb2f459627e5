package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/internal/worker"
	"github.com/rmlab/lab/steps"
)

// fakeEnv has a queue reader so the queue panel shows figures; no test
// here calls it (data is injected), it only has to exist.
func fakeEnv() *steps.Env {
	return &steps.Env{Queues: func(context.Context, []string) ([]lab.QueueStat, error) { return nil, nil }}
}

// fill puts every panel in a full, known state: three steps of
// fixture-basics run, tables changed by the last one, two queues, three
// workers (running, paused, killed), a blocked session and both ledgers.
func fill(t testing.TB, a *App) {
	t.Helper()
	s := a.sess
	if s == nil || s.lessonID != "fixture-basics" {
		t.Fatalf("fixture-basics is not open")
	}
	s.results[0] = lab.Result{Kind: "reset", Passed: true, Elapsed: 84 * time.Millisecond,
		Sent:     []string{"CREATE DATABASE blog_idempotency_lab_uitest", "INSERT INTO points_account VALUES(7,0)"},
		Observed: "recreated blog_idempotency_lab_uitest from sql/idempotency/schema.sql"}
	s.results[1] = lab.Result{Kind: "sql", Passed: true, Elapsed: 3 * time.Millisecond,
		Observed: "main> START TRANSACTION;\nQuery OK, 0 rows affected (0.00 sec)\nmain> COMMIT;\nQuery OK, 0 rows affected (0.00 sec)"}
	s.results[2] = lab.Result{Kind: "sql", Passed: false, Elapsed: 1010 * time.Millisecond,
		Observed: "main> SELECT points FROM points_account WHERE user_id=7;\n… still waiting after 1s (blocked inside the server)",
		Why:      "statement still waiting after 1s (a lock held by another session?)"}
	s.next = 3
	s.waiting = map[string]bool{"main": false, "B": true}
	s.waitSince["B"] = pinnedNow.Add(-4200 * time.Millisecond)
	a.lesson.Rebuild()
	a.lesson.Bottom()

	tp := a.panels.tables
	tp.data = []tableData{
		{title: "points_account", db: "blog_idempotency_lab_uitest", cols: []string{"user_id", "points"},
			rows: [][]string{{"7", "0"}, {"8", "0"}}},
		{title: "consumed_operation", db: "blog_idempotency_lab_uitest",
			cols: []string{"consumer_name", "business_key", "event_id", "user_id", "amount"}},
	}
	tp.MarkStep()
	a.Update(tablesDataMsg{gen: tp.gen, tables: []tableData{
		{title: "points_account", db: "blog_idempotency_lab_uitest", cols: []string{"user_id", "points"},
			rows: [][]string{{"7", "10"}, {"8", "0"}, {"9", "0"}}},
		{title: "consumed_operation", db: "blog_idempotency_lab_uitest",
			cols: []string{"consumer_name", "business_key", "event_id", "user_id", "amount"},
			rows: [][]string{{"points-award", "order:42:paid", "event-001", "7", "10"}}},
	}})

	qp := a.panels.queues
	qp.names = []string{"orders", "orders.retry"}
	a.Update(queuesDataMsg{gen: qp.gen, stats: []lab.QueueStat{
		{Name: "orders_uitest", Ready: 3, Unacked: 1, Consumers: 1, Exists: true, Source: "management API"},
		{Name: "orders.retry_uitest", Ready: 0, Unacked: -1, Consumers: 0, Exists: true, Source: "passive declare"},
	}})

	a.Update(workersDataMsg{gen: a.panels.workers.gen, statuses: []worker.Status{
		{Name: "c1", Kind: "consumer", PID: 4242, State: worker.Paused, Point: "after-mark-commit", Log: []string{"@pause after-mark-commit"}},
		{Name: "c2", Kind: "consumer", PID: 4243, State: worker.Killed, Point: "before-points"},
		{Name: "relay-A", Kind: "relay", PID: 4250, State: worker.Exited, ExitCode: 0},
	}, sessions: map[string]bool{"main": false, "B": true}})

	a.panels.ledger.Set([]lab.Ledger{
		{Variant: "unsafe", Label: "commit the mark even when the UPDATE found no account", Intended: 1, Applied: 0, Lost: 1},
		{Variant: "safe", Label: "roll back when the UPDATE found no account", Intended: 1, Applied: 1, Absorbed: 1},
	})
}

// TestPanelsMatchGoldenFiles renders every pane and the whole screen with
// the color profile pinned to ASCII at 80x24 and 200x60.
func TestPanelsMatchGoldenFiles(t *testing.T) {
	for _, size := range auditSizes {
		w, h := size[0], size[1]
		suffix := fmt.Sprintf("%dx%d", w, h)
		t.Run(suffix, func(t *testing.T) {
			a := newTestApp(t, fakeEnv(), "en", "fixture-basics", w, h)
			fill(t, a)
			golden(t, "screen_lesson_"+suffix, ascii(a.render()))

			panels := map[string]Component{"tables": a.panels.tables, "queues": a.panels.queues,
				"workers": a.panels.workers, "ledger": a.panels.ledger}
			for i, name := range []string{"tables", "queues", "workers", "ledger"} {
				a.panels.active = i
				a.panels.markActive()
				golden(t, "panel_"+name+"_"+suffix, ascii(panels[name].View()))
			}
			a.panels.active = panelTables
			a.panels.markActive()
			golden(t, "panel_lesson_"+suffix, ascii(a.lesson.View()))

			a.press("esc")
			golden(t, "panel_list_"+suffix, ascii(a.list.View()))
			golden(t, "screen_list_"+suffix, ascii(a.render()))

			a.press("?")
			golden(t, "screen_help_"+suffix, ascii(a.render()))
		})
	}
}

// TestChineseLessonMatchesGoldenFile pins CJK wrapping at 80x24.
func TestChineseLessonMatchesGoldenFile(t *testing.T) {
	a := newTestApp(t, fakeEnv(), "zh", "fixture-basics", 80, 24)
	fill(t, a)
	a.lesson.Top()
	golden(t, "screen_lesson_zh_80x24", ascii(a.render()))
}

// TestChoiceMenuMatchesGoldenFile pins the fault menu of a choice step, at
// 100x30 and at each of the audit's sizes in both languages (the menu
// takes the lines its options need).
func TestChoiceMenuMatchesGoldenFile(t *testing.T) {
	a := newTestApp(t, fakeEnv(), "en", "fixture-choice", 100, 30)
	a.press("down")
	golden(t, "screen_choice_100x30", ascii(a.render()))
	for _, lang := range []string{"en", "zh"} {
		for _, size := range auditSizes {
			a := newTestApp(t, fakeEnv(), lang, "fixture-choice", size[0], size[1])
			golden(t, fmt.Sprintf("screen_choice_%s_%dx%d", lang, size[0], size[1]), ascii(a.render()))
		}
	}
}

// press feeds one key to Update (commands are not run).
func (a *App) press(k string) { a.Update(keyMsg(k)) }

// chaosFixture is a chaos run six seconds into its schedule, after an
// unsafe run that lost two orders.
func chaosFixture(gen int) chaosDataMsg {
	secs := []chaos.Bucket{{Committed: 20, Published: 18, Applied: 15}, {Committed: 24, Published: 25, Applied: 24},
		{Committed: 24, Published: 12, Applied: 10, Absorbed: 1}, {Committed: 23, Published: 30, Applied: 31},
		{Committed: 24, Published: 24, Applied: 22, Absorbed: 2}, {Committed: 25, Published: 26, Applied: 27}}
	return chaosDataMsg{gen: gen, running: true, pipeline: "safe", seed: 1, duration: 5 * time.Second,
		timeline: chaos.Timeline{Phase: "schedule", Seconds: secs, Faults: []chaos.Mark{
			{T: 500, Kind: chaos.DropConfirm, Target: "relays", Result: "the next publisher confirm from the broker is dropped"},
			{T: 1030, Kind: chaos.CutAMQP, Target: "relays", Result: "the connection that sends the next basic.publish is cut right after it"},
			{T: 2410, Kind: chaos.KillConsumer, Target: "consumer-2", Point: "after-commit", Result: "SIGKILL pid 4242 paused at after-commit"},
		}},
		done: []*chaos.Summary{{Pipeline: "mark-before-publish", Committed: 120, Lost: 2, Violations: []string{"lost: 2"}}}}
}

// TestChaosPanelMatchesGoldenFiles pins the chaos panel (chart, faults,
// results) in English and Chinese.
func TestChaosPanelMatchesGoldenFiles(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		a := newTestApp(t, fakeEnv(), lang, "fixture-basics", 100, 30)
		p := newChaosPanel(a.c)
		p.SetSize(80, 16)
		p.Update(chaosFixture(p.gen))
		golden(t, "panel_chaos_"+lang+"_80x16", ascii(p.View()))
		for i, l := range strings.Split(ascii(p.View()), "\n") {
			if w := lipgloss.Width(l); w != 80 {
				t.Errorf("%s line %d is %d cells wide, want 80: %q", lang, i, w, l)
			}
		}
	}
}

// A run with more faults than the panel has lines for says how many it
// left out, newest shown: the panel listed 3 of 5 and said nothing.
func TestTheChaosPanelSaysHowManyFaultsItLeavesOut(t *testing.T) {
	a := newTestApp(t, fakeEnv(), "en", "fixture-basics", 100, 30)
	p := newChaosPanel(a.c)
	p.SetSize(80, 16)
	m := chaosFixture(p.gen)
	m.timeline.Faults = append(m.timeline.Faults,
		chaos.Mark{T: 3000, Kind: chaos.CutAMQP, Target: "consumers", Result: "cut"},
		chaos.Mark{T: 3500, Kind: chaos.DropConfirm, Target: "relays", Result: "dropped"})
	p.Update(m)
	v := plainView(p.View())
	if !strings.Contains(v, "(+2 earlier faults") || !strings.Contains(v, "3.5s drop-confirm") || strings.Contains(v, "0.5s drop-confirm") {
		t.Errorf("the panel does not show the newest three faults and the count of the rest:\n%s", v)
	}
}

// A pane too short for the per-second chart says how many lines more it
// needs, and keeps the totals: at 80×24 the chart was simply not there.
func TestAChaosPaneTooShortForTheChartSaysSo(t *testing.T) {
	a := newTestApp(t, fakeEnv(), "en", "fixture-basics", 100, 30)
	p := newChaosPanel(a.c)
	p.Update(chaosFixture(p.gen))
	for h, want := range map[int]string{16: "dots: committed/s", 9: "more lines of height needed", 8: "more lines of height needed"} {
		p.SetSize(80, h)
		v := plainView(p.View())
		if !strings.Contains(v, want) {
			t.Errorf("at 80x%d the panel lacks %q:\n%s", h, want, v)
		}
	}
}

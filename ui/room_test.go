package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/worker"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
)

// fortyInARoom is a room of forty, the first three failing or stuck.
func fortyInARoom() roomDataMsg {
	var ps []room.Participant
	for i := range 40 {
		p := room.Participant{Name: fmt.Sprintf("p%02d", i), Lesson: "broker-lost-confirm", Step: 3, Steps: 20, Online: true, OnStep: time.Minute}
		switch i {
		case 0:
			p.FailStep, p.FailWhy = "[5/20] expect", "value 11: value is 10"
		case 1:
			p.Stuck = true
		case 39:
			p.Online = false
		}
		ps = append(ps, p)
	}
	polls := []room.Poll{{Lesson: "outbox-at-least-once", Name: "confirm", Answers: map[string]int{"yes": 12, "no": 2}, Answered: 14, Reached: 20}}
	return roomDataMsg{parts: ps, polls: polls}
}

func newRoomView(t *testing.T, w, h int) *RoomView {
	t.Helper()
	ls, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	v := NewRoom(context.Background(), &room.Room{Name: "monday"}, ls)
	v.Update(tea.WindowSizeMsg{Width: w, Height: h})
	v.Update(fortyInARoom())
	return v
}

// At 80×24 the instructor scrolls to every one of forty participants (12
// of 20 used to show, and nothing scrolled), no line is wider than the
// screen, and a failing step's why and a poll's counts wrap rather than
// being cut.
func TestTheRoomOfFortyScrollsToEveryoneAt80x24(t *testing.T) {
	v := newRoomView(t, 80, 24)
	seen := map[string]bool{}
	for range 60 {
		out := v.render()
		lines := strings.Split(out, "\n")
		if len(lines) > 24 {
			t.Fatalf("%d lines at 80×24:\n%s", len(lines), out)
		}
		for _, l := range lines {
			if w := lipgloss.Width(l); w > 80 {
				t.Fatalf("a line %d wide: %q", w, l)
			}
			if f := strings.Fields(ansi.Strip(l)); len(f) > 0 && strings.HasPrefix(f[0], "p") && len(f[0]) == 3 {
				seen[f[0]] = true
			}
		}
		v.key(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if len(seen) != 40 {
		t.Fatalf("saw %d of 40 participants by scrolling", len(seen))
	}
	top := newRoomView(t, 80, 24).render()
	for _, want := range []string{"failing", "stuck", "rows 1-", "of 40", "answered 14 of 20 in", "value 11:", "value is 10", "q quit", "verdicts"} {
		if !strings.Contains(top, want) {
			t.Errorf("the first page lacks %q:\n%s", want, top)
		}
	}
	if strings.Contains(top, "the article: no") {
		t.Error("the article's answer shows before a")
	}
}

// f shows only those who need help; a reveals the article's answer.
func TestTheRoomFiltersThoseWhoNeedHelpAndRevealsTheAnswer(t *testing.T) {
	v := newRoomView(t, 120, 40)
	v.key(tea.KeyPressMsg{Code: 'f', Text: "f"})
	out := v.render()
	if !strings.Contains(out, "p00") || !strings.Contains(out, "p01") || strings.Contains(out, "p02") {
		t.Fatalf("needs help shows:\n%s", out)
	}
	if !strings.Contains(out, "13 broker-lost-confirm") || !strings.Contains(out, "[5/20] expect: value 11: value is 10") {
		t.Errorf("the failing step and its why are not shown:\n%s", out)
	}
	v.key(tea.KeyPressMsg{Code: 'a', Text: "a"})
	if out := v.render(); !strings.Contains(out, "the article: no") {
		t.Errorf("a did not reveal the answer:\n%s", out)
	}
}

// The instructor's message stays on the header line until x, keys in
// between do not take it away; the countdown shows minutes and seconds
// left, then that time is up; zh says both in Chinese.
func TestTheInstructorsMessageStaysUntilDismissedAndTheTimerCounts(t *testing.T) {
	for _, c := range []struct{ lang, msg, left string }{{"en", "instructor: five minutes left", "left"}, {"zh", "讲师：five minutes left", "剩余"}} {
		a := newTestApp(t, nil, c.lang, "fixture-choice", 100, 30)
		a.Update(Broadcast{Text: "five minutes left"})
		a.Update(Timer{Until: time.Now().Add(10*time.Minute + 2*time.Second)})
		a.Update(tea.KeyPressMsg{Code: tea.KeyDown})
		head := strings.Split(a.render(), "\n")[0]
		if !strings.Contains(head, c.msg) || !strings.Contains(head, c.left) || !strings.Contains(head, "10:0") {
			t.Errorf("%s: the header after a key: %q", c.lang, ansi.Strip(head))
		}
		a.Update(tea.KeyPressMsg{Code: 'x', Text: "x"})
		if head := strings.Split(a.render(), "\n")[0]; strings.Contains(head, "five minutes left") {
			t.Errorf("%s: x did not dismiss it: %q", c.lang, ansi.Strip(head))
		}
		a.Update(Timer{Until: time.Now().Add(-time.Second)})
		if head := ansi.Strip(strings.Split(a.render(), "\n")[0]); !strings.Contains(head, map[string]string{"en": "time is up", "zh": "时间到"}[c.lang]) {
			t.Errorf("%s: a timer that ended: %q", c.lang, head)
		}
	}
}

// The projector view shows where the class is, per lesson and step, and
// the poll of the lesson most are on, with no participant's name.
func TestTheProjectorViewShowsTheClassWithoutNames(t *testing.T) {
	v := newRoomView(t, 100, 30)
	v.polls = []room.Poll{{Lesson: "broker-lost-confirm", Name: "confirm", Answers: map[string]int{"yes": 30, "no": 6}, Answered: 36, Reached: 39}}
	v.key(tea.KeyPressMsg{Code: 'p', Text: "p"})
	out := ansi.Strip(v.render())
	for _, p := range v.parts {
		if strings.Contains(out, p.Name) {
			t.Fatalf("the projector shows %s:\n%s", p.Name, out)
		}
	}
	for _, want := range []string{"13 ", "39 working, 0 done", "steps 0-20", "poll: 13 broker-lost-confirm / confirm", "answered 36 of 39"} {
		if !strings.Contains(out, want) {
			t.Errorf("the projector lacks %q:\n%s", want, out)
		}
	}
}

// The room screen speaks the server's language: in zh its words are
// Chinese, its columns line up by display width, and no line is wider than
// 80 cells.
func TestTheRoomScreenInChineseFitsEightyColumns(t *testing.T) {
	v := newRoomView(t, 80, 24)
	v.Lang = "zh"
	out := v.render()
	for _, want := range []string{"教室 monday", "学员", "失败", "卡住", "投票", "本课 20 人中 14"} {
		if !strings.Contains(ansi.Strip(out), want) {
			t.Errorf("zh lacks %q:\n%s", want, ansi.Strip(out))
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if w := lipgloss.Width(l); w > 80 {
			t.Errorf("a line %d cells wide: %q", w, ansi.Strip(l))
		}
	}
	v.key(tea.KeyPressMsg{Code: 'p', Text: "p"})
	if out := ansi.Strip(v.render()); !strings.Contains(out, "进行中") {
		t.Errorf("the projector in zh:\n%s", out)
	}
}

// A choice's prompt and options wrap inside the lesson pane at 80×24 and
// 160×45: each option can be read whole before it is chosen (lesson 31's
// ended mid-word, "…then publis").
func TestChoiceOptionsAreShownWholeAtEverySize(t *testing.T) {
	long1 := "mark-before-publish: the relay marks the event SENT in its own transaction first, then publishes it to the broker, and a crash between the two loses the event"
	long2 := "publish-before-mark: the relay publishes the event and waits for the broker's confirm, then marks it SENT, and a crash between the two sends it twice"
	dir := t.TempDir()
	for _, lang := range []string{"en", "zh"} {
		os.MkdirAll(filepath.Join(dir, lang), 0o755)
		src := "# Long options\n\n```lesson\nid: long-options\nnumber: 1\npart: outbox\n```\n\nText.\n\n" +
			"```choice name=unsafe prompt=\"Which unsafe relay does the chaos run break, and where exactly does each one lose or duplicate an event?\"\n" +
			long1 + "\n" + long2 + "\n```\n\n```sleep for=0.01s\n```\n" +
			"\n```ledger variant=unsafe expect=lost\nintended: 1\napplied: 0\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n"
		os.WriteFile(filepath.Join(dir, lang, "01-long-options.md"), []byte(src), 0o644)
	}
	for _, size := range [][2]int{{80, 24}, {160, 45}} {
		setEnv(t, progress.Env, filepath.Join(t.TempDir(), "progress.json"))
		a, err := newApp(context.Background(), Options{Env: &steps.Env{}, Lang: "en", LessonsDir: dir, Start: "long-options"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.shutdown)
		a.c.st = NewStyles(true, true)
		a.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		d := newDriver(t, a)
		d.until("the lesson to open", 2*time.Second, idle)
		flat := strings.Join(strings.Fields(strings.ReplaceAll(ansi.Strip(a.render()), "│", " ")), " ")
		for _, want := range []string{long1, long2, "where exactly does each one lose or duplicate an event?"} {
			if !strings.Contains(flat, want) {
				t.Errorf("%dx%d: the screen does not show %q whole:\n%s", size[0], size[1], want, ansi.Strip(a.render()))
			}
		}
	}
}

// The Workers panel scrolls: past what fits, the newest worker (the one the
// lesson is talking about) shows while the panel is not active, the
// selected one while it is, and a line says which rows show.
func TestTheWorkersPanelKeepsTheNewestAndTheSelectedInView(t *testing.T) {
	c := &common{st: NewStyles(true, true), keys: DefaultKeyMap(), env: &steps.Env{}, lang: "en", now: time.Now}
	p := newWorkersPanel(c)
	p.SetSize(60, 9) // 7 inner lines: titles, 3 rows, the rows line, log, sessions
	for i := range 8 {
		p.statuses = append(p.statuses, worker.Status{Name: fmt.Sprintf("c%d", i+1), Kind: "consumer", PID: 100 + i, State: worker.Running})
	}
	v := ansi.Strip(p.View())
	if !strings.Contains(v, "c8 ") || strings.Contains(v, "c1 ") || !strings.Contains(v, "workers 6-8 of 8") {
		t.Fatalf("inactive: want the newest in view:\n%s", v)
	}
	p.active, p.selected = true, 1
	v = ansi.Strip(p.View())
	if !strings.Contains(v, "> c2") || !strings.Contains(v, "workers 1-3 of 8") {
		t.Fatalf("active with c2 selected:\n%s", v)
	}
}

// The ledger panel draws only what a ledger measured: a field neither side
// gave has no row, and one side's unmeasured field is "-", never a 0 that
// contradicts the lesson (lesson 13's safe column said "absorbed 0" right
// after the log said a duplicate was absorbed).
func TestTheLedgerPanelDrawsOnlyWhatWasMeasured(t *testing.T) {
	c := &common{st: NewStyles(true, true), keys: DefaultKeyMap(), env: &steps.Env{}, lang: "en", now: time.Now}
	p := newLedgerPanel(c)
	p.SetSize(90, 14)
	p.Set([]lab.Ledger{
		{Variant: "unsafe", Intended: 1, Applied: 2, Twice: 1, Fields: []string{"intended", "applied"}},
		{Variant: "safe", Intended: 1, Published: 2, Applied: 1, Absorbed: 1, Fields: []string{"intended", "published", "applied", "absorbed"}},
	})
	v := ansi.Strip(p.View())
	for _, bad := range []string{"delivered", "committed"} {
		if strings.Contains(v, bad) {
			t.Errorf("the panel draws %s, which no ledger measured:\n%s", bad, v)
		}
	}
	for _, line := range strings.Split(v, "\n") {
		if f := strings.Fields(strings.Trim(line, "│ ")); len(f) == 3 && (f[0] == "published" || f[0] == "absorbed") {
			if f[1] != "-" || f[2] == "0" {
				t.Errorf("row %q: the unsafe side measured no %s", line, f[0])
			}
		}
	}
	if !strings.Contains(v, "published") || !strings.Contains(v, "absorbed") {
		t.Errorf("the safe side's measured figures are missing:\n%s", v)
	}
}

// A participant whose why or verdicts wrap takes several lines: the room
// still scrolls to the last one, in every filter (the scroll was clamped
// by participants, and the last four of forty were out of reach).
func TestTheRoomReachesEveryoneWhenTheirRowsWrap(t *testing.T) {
	m := fortyInARoom()
	for i := 32; i < 40; i++ {
		m.parts[i].Online = false
		m.parts[i].Updated = time.Now().Add(-24 * time.Minute)
		m.parts[i].Verdicts = "unsafe: duplicate points, safe: one award, and a verdict long enough to wrap twice at eighty columns"
	}
	for i := 2; i < 10; i++ {
		m.parts[i].FailStep, m.parts[i].FailWhy = "[5/20] expect", "value 11: value is 10, and a why long enough to wrap onto a second line at eighty"
	}
	for _, f := range []struct {
		keys string
		want int
	}{{"", 40}, {"f", 10}, {"ff", 8}} {
		v := newRoomView(t, 80, 24)
		v.Update(m)
		for _, k := range f.keys {
			v.key(tea.KeyPressMsg{Code: k, Text: string(k)})
		}
		seen := map[string]bool{}
		for range 60 {
			for _, l := range strings.Split(ansi.Strip(v.render()), "\n") {
				if fs := strings.Fields(l); len(fs) > 0 && strings.HasPrefix(fs[0], "p") && len(fs[0]) == 3 {
					seen[fs[0]] = true
				}
			}
			v.key(tea.KeyPressMsg{Code: tea.KeyDown})
		}
		if len(seen) != f.want {
			t.Errorf("filter %q: saw %d of %d participants by scrolling", f.keys, len(seen), f.want)
		}
		// Page by page too: a page is the participants shown, not lines.
		v.key(tea.KeyPressMsg{Code: 'g', Text: "g"})
		paged := map[string]bool{}
		for range 30 {
			for _, l := range strings.Split(ansi.Strip(v.render()), "\n") {
				if fs := strings.Fields(l); len(fs) > 0 && strings.HasPrefix(fs[0], "p") && len(fs[0]) == 3 {
					paged[fs[0]] = true
				}
			}
			v.key(tea.KeyPressMsg{Code: tea.KeyPgDown})
		}
		if len(paged) != f.want {
			t.Errorf("filter %q: saw %d of %d participants with pgdown", f.keys, len(paged), f.want)
		}
		if head := strings.Split(ansi.Strip(v.render()), "\n")[0]; !strings.Contains(head, "8 off") {
			t.Errorf("the header at 80 columns lost the offline count: %q", head)
		}
		if out := ansi.Strip(v.render()); strings.Contains(out, "off 24m0s") {
			t.Errorf("an offline time in seconds pushes the columns out:\n%s", out)
		}
	}
}

// At 80×24 the projector keeps its poll and its keys on screen: lessons
// it has no lines for are counted, and each lesson's counts show whole.
func TestTheProjectorFitsItsPollAndKeysAt80x24(t *testing.T) {
	m := fortyInARoom()
	ls, _ := labs.Builtin("en")
	for i := range m.parts {
		m.parts[i].Lesson = ls[i%12].ID // twelve lessons: more than 24 lines hold
	}
	m.polls = []room.Poll{{Lesson: ls[0].ID, Name: "x", Answers: map[string]int{"yes": 3, "no": 1}, Answered: 4, Reached: 4}}
	v := newRoomView(t, 80, 24)
	v.Update(m)
	v.key(tea.KeyPressMsg{Code: 'p', Text: "p"})
	out := ansi.Strip(v.render())
	lines := strings.Split(out, "\n")
	if len(lines) > 24 {
		t.Errorf("the projector is %d lines at 80×24:\n%s", len(lines), out)
	}
	for _, want := range []string{"answered 4 of 4", "more lessons", "working,"} {
		if !strings.Contains(out, want) {
			t.Errorf("the projector at 80×24 lacks %q:\n%s", want, out)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "working") && !strings.Contains(l, "done") {
			t.Errorf("a lesson's counts are cut: %q", l)
		}
	}
}

// Every command the instructor types on the room screen that is carried
// out is logged (lab serve writes it to its log and the room's); a refused
// one is not (it was only said on the status line).
func TestCommandsTypedOnTheRoomScreenAreLogged(t *testing.T) {
	v := newRoomView(t, 120, 40)
	var logged []string
	v.Log = func(line string) { logged = append(logged, line) }
	run := func(cmd tea.Cmd) {
		if cmd == nil {
			return
		}
		// The room here has no database: only the log's command is run
		// to its end (the others, which would reach the room, panic).
		if b, ok := cmd().(tea.BatchMsg); ok {
			for _, c := range b {
				func() {
					defer func() { recover() }()
					if c != nil {
						c()
					}
				}()
			}
		}
	}
	run(v.send("watch nosuchname"))
	v.parts[39].Online = false
	run(v.send("watch p39"))
	if len(logged) != 0 || !strings.Contains(v.status, "p39 is offline") {
		t.Errorf("a refused watch was logged (%v), or an offline one not refused (status %q)", logged, v.status)
	}
	run(v.send("watch p03"))
	run(v.send("say p05 \x1b]8;;http://x\x07hi\x1b]8;;\x07 there"))
	want := []string{"instructor: watch p03", "instructor: say p05 hi there"}
	if strings.Join(logged, "|") != strings.Join(want, "|") {
		t.Errorf("logged %q, want %q", logged, want)
	}
}

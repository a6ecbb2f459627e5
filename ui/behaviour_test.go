package ui

import (
	"context"
	"encoding/json"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
)

func idle(a *App) bool { return a.sess != nil && !a.sess.running }

// runChoiceLesson opens fixture-choice, takes option index opt and runs
// every step with enter.
func runChoiceLesson(t *testing.T, d *driver, opt int) {
	t.Helper()
	d.until("the lesson to open", 2*time.Second, idle)
	for i := 0; i < opt; i++ {
		d.press("down")
	}
	for !d.a.sess.Done() {
		prev := d.a.sess.next
		d.press("enter")
		d.until("the step to finish", 5*time.Second, func(a *App) bool { return idle(a) && a.sess.next > prev })
	}
}

func TestChoiceMenuTakesTheHighlightedOptionAndSkipsTheOtherPath(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	d := newDriver(t, a)
	runChoiceLesson(t, d, 1)
	s := a.sess
	if got := s.run.Choices["kill-at"]; got != "after" {
		t.Fatalf("run.Choices[kill-at] = %q, want after (the option under the cursor)", got)
	}
	if r := s.results[1]; !r.Skipped {
		t.Errorf("the when=kill-at:between step ran on the after path: %+v", r)
	}
	if r := s.results[2]; r.Skipped || !r.Passed {
		t.Errorf("the when=kill-at:after step did not run: %+v", r)
	}
	v := plainView(a.panels.ledger.View())
	for _, want := range []string{"lost", "applied once", "mark first, points later"} {
		if !strings.Contains(v, want) {
			t.Errorf("ledger panel lacks %q:\n%s", want, v)
		}
	}
}

func TestKeysStillWorkWhileAStepRuns(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	d := newDriver(t, a)
	d.until("the lesson to open", 2*time.Second, idle)
	d.press("enter") // the choice step starts; its result is not processed yet
	if !a.sess.running {
		t.Fatal("enter did not start the step")
	}
	before := a.panels.active
	d.press("tab")
	d.press("?")
	if a.panels.active != (before+1)%panelCount || !a.showHelp {
		t.Fatalf("keys were not handled while the step ran (panel %d, help %v)", a.panels.active, a.showHelp)
	}
	d.press("esc")
	d.press("enter")
	if !strings.Contains(a.status, "step is running") {
		t.Errorf("a second enter while running should say so, status %q", a.status)
	}
	if !strings.Contains(plainView(a.render()), "running step 1/5") {
		t.Errorf("no running line with the spinner:\n%s", plainView(a.render()))
	}
	d.until("the step to finish", 5*time.Second, func(a *App) bool { return idle(a) && a.sess.next == 1 })
	// The footer's "running" went with the step, before any key.
	if v := plainView(a.render()); strings.Contains(v, "step is running") {
		t.Errorf("the footer still says a step is running after it ended:\n%s", v)
	}
}

func TestLanguageSwitchKeepsLessonStepAndRun(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	d := newDriver(t, a)
	d.until("the lesson to open", 2*time.Second, idle)
	d.press("enter")
	d.until("the choice to run", 5*time.Second, func(a *App) bool { return idle(a) && a.sess.next > 0 })
	sess, run, next := a.sess, a.sess.run, a.sess.next
	d.press("l")
	if a.c.lang != "zh" || a.sess != sess || a.sess.run != run || a.sess.next != next {
		t.Fatalf("after l: lang %s, same session %v, same run %v, next %d (was %d)",
			a.c.lang, a.sess == sess, a.sess.run == run, a.sess.next, next)
	}
	if v := plainView(a.render()); !strings.Contains(v, "消费者") {
		t.Errorf("the lesson is not shown in Chinese:\n%s", v)
	}
	d.press("l")
	if a.c.lang != "en" || a.sess != sess {
		t.Fatalf("switching back lost the place: lang %s", a.c.lang)
	}
}

func TestProgressIsSavedAndTheLabResumesWhereTheLearnerLeftOff(t *testing.T) {
	setEnv(t, progress.Env, t.TempDir()+"/progress.json")
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	d := newDriver(t, a)
	d.until("the lesson to open", 2*time.Second, idle)
	d.press("enter") // take "between"
	d.until("the choice", 5*time.Second, func(a *App) bool { return idle(a) && a.sess.next == 1 })
	d.press("enter") // its sleep; the other path's sleep is skipped
	d.until("two steps", 5*time.Second, func(a *App) bool { return idle(a) && a.sess.next == 3 })
	a.shutdown()
	p, err := progress.Load(os.Getenv(progress.Env))
	if err != nil {
		t.Fatal(err)
	}
	lp := p.Lessons["fixture-choice"]
	if lp == nil || lp.Step != 3 || lp.Choices["kill-at"] != "between" || p.Last != "fixture-choice" {
		t.Fatalf("progress = %+v (last %q), want step 3 with kill-at=between", lp, p.Last)
	}

	// Opened by its number (lab open 11), the lesson is found by its id in
	// the progress: the offer comes, and the last lesson stays its id.
	byNum := newTestApp(t, nil, "en", "11", 100, 30)
	dn := newDriver(t, byNum)
	dn.until("the offer", 5*time.Second, idle)
	if byNum.sess.offer != 3 || byNum.c.progress.Last != "fixture-choice" {
		t.Fatalf("opened by number: offer %d, last lesson %q; want 3 and fixture-choice", byNum.sess.offer, byNum.c.progress.Last)
	}
	byNum.shutdown()

	// A new lab with no lesson named opens the last one and offers to
	// resume; enter re-runs its steps, on the same path and with replay's
	// short waits, up to where the learner was.
	b := newTestApp(t, nil, "en", "", 100, 30)
	db := newDriver(t, b)
	db.until("the offer", 5*time.Second, idle)
	if b.sess.next != 0 || b.sess.offer != 3 || !strings.Contains(plainView(b.lesson.View()), "You had run 3 of") {
		t.Fatalf("reopening ran steps before the learner answered, or offered nothing: next %d, offer %d\n%s",
			b.sess.next, b.sess.offer, plainView(b.lesson.View()))
	}
	db.press("enter")
	db.until("the resume to catch up", 5*time.Second, func(a *App) bool { return idle(a) && a.sess.next == 3 })
	if !b.sess.run.Short {
		t.Error("the re-run does not use replay's short waits")
	}
	if v := plainView(b.render()); strings.Contains(v, "re-running the first") {
		t.Errorf("the footer still says the resume is re-running steps after it caught up:\n%s", v)
	}
	if b.sess.lessonID != "fixture-choice" || b.sess.run.Choices["kill-at"] != "between" || !b.sess.results[1].Passed || b.sess.results[1].Skipped {
		t.Fatalf("resume took another path: lesson %s, choices %v, step 2 %+v", b.sess.lessonID, b.sess.run.Choices, b.sess.results[1])
	}
	b.press("esc")
	if !strings.Contains(plainView(b.list.View()), "[~] 11") {
		t.Errorf("the list does not mark the lesson in progress:\n%s", plainView(b.list.View()))
	}
}

func TestResetLessonStartsANewRunAndResetAllAsksFirst(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	d := newDriver(t, a)
	runChoiceLesson(t, d, 0)
	old := a.sess
	if !a.c.progress.Lessons["fixture-choice"].Done {
		t.Fatal("finished lesson not marked done")
	}
	d.press("r")
	if a.sess == old || a.sess.next != 0 || len(a.sess.run.Choices) != 0 || a.c.progress.Lessons["fixture-choice"] != nil {
		t.Fatalf("r did not start a new run from the top (next %d, choices %v)", a.sess.next, a.sess.run.Choices)
	}
	d.until("the old run to close", 5*time.Second, func(*App) bool {
		select {
		case <-old.closed:
			return true
		default:
			return false
		}
	})

	a.c.progress.Of("fixture-basics").Step = 2
	d.press("R")
	d.press("n")
	if a.c.progress.Lessons["fixture-basics"] == nil {
		t.Fatal("R then n reset the progress anyway")
	}
	d.press("R")
	d.press("y")
	if len(a.c.progress.Lessons) != 0 {
		t.Fatalf("R then y left progress: %v", a.c.progress.Lessons)
	}
}

func TestEscShowsTheListAndEnterOpensTheSelectedLesson(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-basics", 80, 24)
	d := newDriver(t, a)
	d.press("esc")
	if a.focus != focusList || !strings.Contains(plainView(a.render()), "Lessons") {
		t.Fatal("esc did not show the lesson list")
	}
	d.press("down")
	d.press("enter")
	if a.focus != focusLesson || a.sess.lessonID != "fixture-choice" {
		t.Fatalf("enter opened %q", a.sess.lessonID)
	}
	d.press("esc")
	d.press("down")
	d.press("enter")
	if !strings.Contains(plainView(a.render()), "explain-only") || !a.c.progress.Lessons["fixture-read"].Done {
		t.Errorf("explain-only lesson not shown as read:\n%s", plainView(a.render()))
	}
}

func TestQuitKeysQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		a := newTestApp(t, nil, "en", "fixture-basics", 80, 24)
		_, cmd := a.Update(keyMsg(k))
		if cmd == nil {
			t.Fatalf("%s returned no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s did not quit", k)
		}
	}
}

func TestKillWithNoWorkerSaysHowToSelectOne(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-basics", 80, 24)
	if _, cmd := a.Update(keyMsg("k")); cmd != nil {
		t.Fatal("k with no worker returned a command")
	}
	if !strings.Contains(a.status, "Workers panel") {
		t.Errorf("status %q", a.status)
	}
}

func TestHelpListsEveryKey(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-basics", 100, 40)
	a.press("?")
	v := plainView(a.render())
	for _, b := range a.c.keys.All() {
		if !strings.Contains(v, b.Help().Key+" ") || !strings.Contains(v, b.Help().Desc) {
			t.Errorf("help lacks %q: %q", b.Help().Key, b.Help().Desc)
		}
	}
	a.press("x")
	if a.showHelp {
		t.Error("any key should close help")
	}
}

// TestStalePanelMessagesAreDroppedAfterARestart: a restart bumps the
// generation; the old chain's data and ticks are dropped without re-arming,
// so a restarted panel never polls twice.
func TestStalePanelMessagesAreDroppedAfterARestart(t *testing.T) {
	a := newTestApp(t, fakeEnv(), "en", "fixture-basics", 80, 24)
	l := a.find("fixture-basics")
	tp, qp, wp := a.panels.tables, a.panels.queues, a.panels.workers
	qp.names = []string{"orders"}
	oldT, oldQ, oldW := tp.gen, qp.gen, wp.gen
	tp.Restart(l, nil)
	qp.Refresh()
	wp.Restart(a.sess)
	stale := []tea.Msg{
		tablesDataMsg{gen: oldT, tables: []tableData{{title: "stale"}}}, tablesTickMsg{gen: oldT},
		queuesDataMsg{gen: oldQ}, queuesTickMsg{gen: oldQ},
		workersDataMsg{gen: oldW}, workersTickMsg{gen: oldW},
	}
	for _, m := range stale {
		if cmd := a.panels.Update(m); cmd != nil {
			t.Errorf("stale %T re-armed a chain", m)
		}
	}
	if len(tp.data) > 0 {
		t.Error("stale table data was applied")
	}
	// The current chain: data arms one tick, a tick asks for one poll.
	for _, m := range []tea.Msg{tablesDataMsg{gen: tp.gen}, queuesDataMsg{gen: qp.gen}, workersDataMsg{gen: wp.gen}} {
		if a.panels.Update(m) == nil {
			t.Errorf("current %T did not re-arm its tick", m)
		}
	}
	for _, m := range []tea.Msg{tablesTickMsg{gen: tp.gen}, queuesTickMsg{gen: qp.gen}, workersTickMsg{gen: wp.gen}} {
		if a.panels.Update(m) == nil {
			t.Errorf("current %T did not poll", m)
		}
	}
}

// TestSlowBrokerNeverBlocksUpdate: a queue reader that hangs costs its own
// panel one timed-out poll; Update returns at once.
func TestSlowBrokerNeverBlocksUpdate(t *testing.T) {
	env := &steps.Env{Queues: func(ctx context.Context, _ []string) ([]lab.QueueStat, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	a := newTestApp(t, env, "en", "fixture-choice", 80, 24)
	qp := a.panels.queues
	start := time.Now()
	cmd := qp.Update(queuesTickMsg{gen: qp.gen})
	if d := time.Since(start); d > 5*time.Millisecond || cmd == nil {
		t.Fatalf("Update took %s (cmd %v)", d, cmd != nil)
	}
	msg := cmd()
	if d := time.Since(start); d > pollTimeout+200*time.Millisecond {
		t.Fatalf("the poll took %s, beyond its %s timeout", d, pollTimeout)
	}
	a.Update(msg)
	if !strings.Contains(plainView(qp.View()), "deadline exceeded") {
		t.Errorf("the timeout is not shown:\n%s", plainView(qp.View()))
	}
}

func TestQueuePanelSaysUnavailableWithoutAReader(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 80, 24)
	if v := plainView(a.panels.queues.View()); !strings.Contains(v, "queue state unavailable") {
		t.Errorf("queue panel:\n%s", v)
	}
}

// TestScreenFitsTheTerminalAtEverySize: exactly H lines, none wider than W,
// in every layout and both languages.
func TestScreenFitsTheTerminalAtEverySize(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		for _, sz := range [][2]int{{30, 8}, {60, 13}, {60, 20}, {80, 24}, {100, 30}, {120, 40}, {159, 50}, {160, 30}, {200, 60}, {240, 70}} {
			a := newTestApp(t, fakeEnv(), lang, "fixture-basics", sz[0], sz[1])
			fill(t, a)
			for _, state := range []string{"lesson", "list", "help", "tab"} {
				switch state {
				case "list":
					a.press("esc")
				case "help":
					a.press("?")
				case "tab":
					a.press("esc")
					a.press("enter")
					a.press("tab")
					a.press("tab")
				}
				lines := strings.Split(a.render(), "\n")
				if len(lines) != sz[1] {
					t.Errorf("%s %dx%d %s: %d lines", lang, sz[0], sz[1], state, len(lines))
				}
				for i, l := range lines {
					if w := lipgloss.Width(l); w > sz[0] {
						t.Errorf("%s %dx%d %s: line %d is %d wide: %q", lang, sz[0], sz[1], state, i, w, plainView(l))
					}
				}
			}
		}
	}
}

// TestChineseProseWrapsWithinThePaneAtAnyWidth measures with
// lipgloss.Width (CJK is two cells), never len.
func TestChineseProseWrapsWithinThePaneAtAnyWidth(t *testing.T) {
	ls, err := labs.LoadDir(fixtureLessons, "zh")
	if err != nil {
		t.Fatal(err)
	}
	c := &common{st: NewStyles(true, true), keys: DefaultKeyMap(), env: &steps.Env{}, lang: "zh",
		progress: progress.New(), now: time.Now}
	for w := 12; w <= 200; w += 7 {
		p := newLessonPane(c)
		p.SetSize(w, 40)
		p.Set(ls[0], nil)
		for i, l := range strings.Split(p.View(), "\n") {
			if got := lipgloss.Width(l); got != w {
				t.Fatalf("width %d: line %d is %d cells: %q", w, i, got, plainView(l))
			}
		}
	}
}

func TestAmbiguousGlyphsNeverReachAPane(t *testing.T) {
	got := asciiSafe("… still waiting → ✓ ✗ • “x” — ‹›")
	for _, r := range got {
		if r > 0x7e {
			t.Fatalf("asciiSafe left %q in %q", r, got)
		}
	}
}

// Chinese text's dash stays a dash: "----" in its place read as garbage.
func TestTheChineseDashStaysADash(t *testing.T) {
	if got := asciiSafe("消息——没有丢"); got != "消息——没有丢" {
		t.Errorf("asciiSafe(\"消息——没有丢\") = %q", got)
	}
	if got := asciiSafe("a — b"); got != "a -- b" {
		t.Errorf("a single dash in English: %q, want \"a -- b\"", got)
	}
}

func TestNoColorStillMarksChangedRowsAndTheCursor(t *testing.T) {
	st := NewStyles(true, false)
	for name, s := range map[string]lipgloss.Style{"changed": st.Changed, "selected": st.Selected, "bad verdict": st.VerdictBad} {
		out := s.Render("x")
		if !strings.Contains(out, "\x1b[") || strings.Contains(out, "38;") {
			t.Errorf("%s without color: %q (want an attribute, no color)", name, out)
		}
	}
}

func TestKillAndContinueCheckTheSelectedWorkersState(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-basics", 100, 30)
	a.Update(workersDataMsg{gen: a.panels.workers.gen, statuses: []worker.Status{
		{Name: "gone", State: worker.Exited},
		{Name: "busy", State: worker.Running},
		{Name: "held", State: worker.Paused, Point: "before-commit"},
	}})
	if _, cmd := a.Update(keyMsg("k")); cmd != nil || !strings.Contains(a.status, "already exited") {
		t.Errorf("k on an exited worker: status %q", a.status)
	}
	if a.panels.active != panelWorkers {
		t.Error("k did not bring the worker panel forward")
	}
	a.press("down")
	if _, cmd := a.Update(keyMsg("c")); cmd != nil || !strings.Contains(a.status, "not paused") {
		t.Errorf("c on a running worker: status %q", a.status)
	}
	a.press("down")
	_, cmd := a.Update(keyMsg("c"))
	if cmd == nil {
		t.Fatal("c on a paused worker returned no command")
	}
	// The Run has no such process: the command reports it, Update does not block.
	if m, ok := cmd().(workerActionMsg); !ok || m.name != "held" || m.err == nil {
		t.Errorf("continue command returned %+v", m)
	}
}

func TestTerminalBackgroundPicksLightOrDarkStyles(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-basics", 80, 24)
	a.Update(tea.BackgroundColorMsg{Color: color.White})
	if a.c.st.Dark || a.c.st.GlamourName != "light" {
		t.Errorf("white background: dark=%v glamour=%s", a.c.st.Dark, a.c.st.GlamourName)
	}
	a.Update(tea.BackgroundColorMsg{Color: color.Black})
	if !a.c.st.Dark || a.c.st.GlamourName != "dark" {
		t.Errorf("black background: dark=%v glamour=%s", a.c.st.Dark, a.c.st.GlamourName)
	}
}

// TestAnInterruptedResumeKeepsTheSavedProgress: reopening a lesson re-runs
// the steps already done; quitting (or a step failing) before the re-run
// is back at the learner's place must not lower what was saved.
func TestAnInterruptedResumeKeepsTheSavedProgress(t *testing.T) {
	file := t.TempDir() + "/progress.json"
	setEnv(t, progress.Env, file)
	os.WriteFile(file, []byte(`{"last":"fixture-basics","lessons":{"fixture-basics":{"step":4}}}`), 0o644)
	a := newTestApp(t, nil, "en", "fixture-basics", 100, 30) // no services: the re-run's first step fails
	d := newDriver(t, a)
	d.until("the offer", 5*time.Second, idle)
	d.press("enter")
	d.until("the re-run to stop", 5*time.Second, func(a *App) bool { return idle(a) && a.sess.next >= 1 })
	a.shutdown()
	p, err := progress.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if lp := p.Lessons["fixture-basics"]; lp == nil || lp.Step != 4 {
		t.Fatalf("saved progress %+v after an interrupted re-run, want step 4 kept", lp)
	}
}

// TestLanguageKeyOnALessonWithNoTranslationSaysWhy: l on a lesson that has
// no Chinese file stays in English and the status line says why.
func TestLanguageKeyOnALessonWithNoTranslationSaysWhy(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "en"), 0o755)
	os.MkdirAll(filepath.Join(dir, "zh"), 0o755)
	for _, f := range []string{"01-fixture-basics.md", "21-fixture-read.md"} {
		b, _ := os.ReadFile(filepath.Join(fixtureLessons, "en", f))
		os.WriteFile(filepath.Join(dir, "en", f), b, 0o644)
	}
	b, _ := os.ReadFile(filepath.Join(fixtureLessons, "zh", "01-fixture-basics.md"))
	os.WriteFile(filepath.Join(dir, "zh", "01-fixture-basics.md"), b, 0o644)
	a, err := newApp(context.Background(), Options{Env: &steps.Env{}, Lang: "en", LessonsDir: dir, Start: "fixture-read"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.shutdown)
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	d := newDriver(t, a)
	d.until("the lesson to open", 2*time.Second, idle)
	d.press("l")
	if a.c.lang != "en" || !strings.Contains(a.status, "fixture-read has no zh file") {
		t.Fatalf("lang %s, status %q", a.c.lang, a.status)
	}
}

// TestReopeningALessonOffersToStartOver: r at the offer starts the lesson
// over: a new run from its reset, the saved progress gone.
func TestReopeningALessonOffersToStartOver(t *testing.T) {
	file := t.TempDir() + "/progress.json"
	setEnv(t, progress.Env, file)
	os.WriteFile(file, []byte(`{"last":"fixture-choice","lessons":{"fixture-choice":{"step":3,"choices":{"kill-at":"between"}}}}`), 0o644)
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	d := newDriver(t, a)
	d.until("the offer", 5*time.Second, idle)
	if a.sess.offer != 3 {
		t.Fatalf("offer %d, want 3", a.sess.offer)
	}
	d.press("r")
	d.until("the new run", 5*time.Second, idle)
	if a.sess.offer != 0 || a.sess.catchUp != 0 || a.sess.run.Short {
		t.Fatalf("after r: offer %d, catch-up %d, short %t", a.sess.offer, a.sess.catchUp, a.sess.run.Short)
	}
	if lp := a.c.progress.Lessons["fixture-choice"]; lp != nil && lp.Step > 1 {
		t.Errorf("progress kept after starting over: %+v", lp)
	}
}

// A running step says how long it took the last time it ran here, once
// that was a second or more: a 35 s cluster boot under a bare spinner read
// as a hang. A re-run with replay's short waits says nothing of the kind.
func TestARunningStepSaysHowLongItTookLastTime(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	s := a.sess
	s.next, s.running, s.runStart = 1, true, pinnedNow.Add(-2*time.Second)
	lp := a.c.progress.Of("fixture-choice")
	lp.Took = map[int]int64{1: 35200}
	line := plainView(strings.Join(a.lesson.action(90), "\n"))
	if !strings.Contains(line, "running step 2/5") || !strings.Contains(line, "(last time here: 35.2s)") {
		t.Errorf("the running line: %q", line)
	}
	lp.Took[1] = 400
	if line := plainView(strings.Join(a.lesson.action(90), "\n")); strings.Contains(line, "last time") {
		t.Errorf("a step that took under a second: %q", line)
	}
	lp.Took[1] = 35200
	s.run.Short = true
	if line := plainView(strings.Join(a.lesson.action(90), "\n")); strings.Contains(line, "last time") {
		t.Errorf("a re-run with short waits: %q", line)
	}
}

// The resume offer keeps each key with its words when it must wrap: "r:"
// and "start over" on one line (they were split at 80 columns).
func TestTheResumeOfferKeepsEachKeyWithItsWords(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	a.sess.offer = 3
	for _, w := range []int{40, 60, 78} {
		v := plainView(strings.Join(a.lesson.action(w), "\n"))
		if !strings.Contains(v, "r: start over") || !strings.Contains(v, "enter: resume") {
			t.Errorf("width %d: the offer splits a key from its words:\n%s", w, v)
		}
	}
}

// A failed save is said until a save succeeds, keys or not; then it goes.
func TestAFailedSaveIsSaidUntilASaveSucceeds(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	d := newDriver(t, a)
	d.until("the lesson to open", 2*time.Second, idle)
	a.Update(progressSavedMsg{err: os.ErrPermission})
	if f := plainView(a.footer()); !strings.Contains(f, "could not save progress: permission denied") {
		t.Fatalf("a failed save is not said: %q", f)
	}
	a.Update(progressSavedMsg{})
	if f := plainView(a.footer()); strings.Contains(f, "could not save") {
		t.Fatalf("the failed save is still said after a save succeeded: %q", f)
	}
}

// A lesson finished before says so when reopened, and offers the next
// lesson and starting over: "resume" would re-run every step for nothing.
func TestAFinishedLessonSaysDoneAndEnterOpensTheNext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "progress.json")
	setEnv(t, progress.Env, path)
	p := progress.New()
	p.Lessons["fixture-choice"] = &progress.Lesson{Done: true, Step: 6}
	b, _ := json.Marshal(p)
	if err := progress.Write(path, b); err != nil {
		t.Fatal(err)
	}
	a := newTestApp(t, nil, "en", "fixture-choice", 80, 24)
	d := newDriver(t, a)
	d.until("the lesson to open", 2*time.Second, idle)
	v := plainView(a.render())
	if !strings.Contains(v, "You finished this lesson.") || !strings.Contains(v, "enter: the next lesson") || strings.Contains(v, "resume") {
		t.Fatalf("a finished lesson reopened:\n%s", v)
	}
	want := a.nextLessonID("fixture-choice")
	if want == "" {
		t.Fatal("the fixture lessons have none after fixture-choice")
	}
	d.press("enter")
	d.until("the next lesson", 5*time.Second, func(a *App) bool { return a.sess != nil && a.sess.lessonID == want })
}

// The header never cuts the lesson's number into another one ("lesson 1…"
// for lesson 11): at every width the number is whole, or not there.
func TestTheHeaderNeverCutsTheLessonNumber(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		a := newTestApp(t, nil, lang, "fixture-choice", 100, 30)
		for w := 20; w <= 100; w++ {
			a.Update(tea.WindowSizeMsg{Width: w, Height: 24})
			h := plainView(a.header())
			if got := displayWidth(h); got != w {
				t.Errorf("%s at %d columns: the header is %d wide: %q", lang, w, got, h)
			}
			word := map[string]string{"en": "lesson 1", "zh": "第 1"}[lang]
			if i := strings.Index(h, word); i >= 0 && !strings.HasPrefix(h[i:], word+"1") {
				t.Errorf("%s at %d columns: the number is cut: %q", lang, w, h)
			}
		}
	}
}

// The lesson's text names the databases as the panels and the SQL shown
// do: blog_idempotency_lab_NS in a namespace.
func TestTheLessonTextNamesTheNamespacedDatabases(t *testing.T) {
	env := &steps.Env{Svc: &services.Services{Names: services.Names{NS: "alice"}}}
	a := newTestApp(t, env, "en", "fixture-basics", 100, 30)
	l := a.find("fixture-basics")
	l.Blocks = append([]lab.Block{{Prose: "Look at `blog_idempotency_lab.points_account`."}}, l.Blocks...)
	a.lesson.Rebuild()
	if v := plainView(a.lesson.View()); !strings.Contains(v, "blog_idempotency_lab_alice.points_account") {
		t.Fatalf("the text does not name the learner's database:\n%s", v)
	}
}

// A sleep step counts down while it runs: a spinner alone reads as a hang.
func TestASleepSaysHowLongIsLeft(t *testing.T) {
	a := newTestApp(t, nil, "en", "fixture-choice", 100, 30)
	s := a.sess
	for i, st := range s.steps {
		if st.Kind == "sleep" {
			s.next, s.running, s.runStart = i, true, a.c.now()
			break
		}
	}
	if !s.running {
		t.Fatal("the fixture has no sleep step")
	}
	if v := plainView(strings.Join(a.lesson.action(100), "\n")); !strings.Contains(v, "of 50ms left") {
		t.Fatalf("a running sleep: %s", v)
	}
	s.running = false
}

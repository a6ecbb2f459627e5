package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/progress"
	"github.com/rmlab/lab/steps"
	"github.com/rmlab/lab/worker"
)

type focusArea int

const (
	focusList focusArea = iota
	focusLesson
)

// layoutMode is how the body is split for the terminal size.
type layoutMode int

const (
	modeList       layoutMode = iota // narrow, list focused: the list alone
	modeSplit                        // narrow: lesson above, tabbed panels below
	modeSide                         // >= 120 cols: lesson | tabbed or stacked panels
	modeWide                         // >= 160 cols: list | lesson | panels
	modeLessonOnly                   // a terminal too short for panels
)

// App is the screen's root model. It owns the panes and the open lesson's
// session, routes messages and keys, and lays the panes out.
type App struct {
	c       *common
	ctx     context.Context
	lessons map[string][]*lab.Lesson
	loadErr map[string]error
	saver   *progressSaver

	list   *listPane
	lesson *lessonPane
	panels *panelSet
	help   *helpOverlay
	spin   spinner.Model
	sess   *session
	// retired are replaced sessions whose close runs in the background;
	// shutdown closes any still open (a quit may drop pending commands).
	retired []*session

	focus      focusArea
	mode       layoutMode
	width      int
	height     int
	showHelp   bool
	confirmAll bool
	status     string
	statusBad  bool
	initCmds   []tea.Cmd

	// observe, when set (tests), sees the model after every message, on the
	// program's goroutine.
	observe func(*App)
}

// newApp loads lessons and progress and opens the first lesson: the one
// asked for, else the one left open, else lesson 1. Nothing here blocks on a
// service; steps run once the program starts.
func newApp(ctx context.Context, opt Options) (*App, error) {
	lang := opt.Lang
	if lang != "zh" {
		lang = "en"
	}
	a := &App{ctx: ctx, lessons: map[string][]*lab.Lesson{}, loadErr: map[string]error{}}
	for _, lg := range labs.Langs {
		var ls []*lab.Lesson
		var err error
		if opt.LessonsDir != "" {
			ls, err = labs.LoadDir(opt.LessonsDir, lg)
		} else {
			ls, err = labs.Builtin(lg)
		}
		a.lessons[lg], a.loadErr[lg] = ls, err
	}
	// A file that did not load leaves the others usable: the screen opens
	// with them and the status line names the first bad file.
	var leftOut labs.FileErrors
	if err := a.loadErr[lang]; err != nil && (!errors.As(err, &leftOut) || len(a.lessons[lang]) == 0) {
		return nil, err
	}
	ns := "" // progress is kept per namespace and lessons folder
	if opt.Env != nil && opt.Env.Svc != nil {
		ns = opt.Env.Svc.Names.NS
	}
	store := opt.Progress
	if store == nil {
		if path, err := progress.Path(ns, opt.LessonsDir); err == nil {
			store = progress.FileStore{Path: path}
		}
	}
	prog := progress.New()
	if store != nil {
		lc, cancel := context.WithTimeout(ctx, 5*time.Second)
		if p, lerr := store.Load(lc); lerr == nil {
			prog = p
		} else {
			a.setStatus(fmt.Sprintf(textFor(lang).ProgressUnreadable, lerr.Error()), true)
		}
		cancel()
		a.saver = &progressSaver{store: store}
	}
	if opt.Env == nil {
		opt.Env = &steps.Env{} // no services: panels say so, steps fail with a reason
	}
	var caps map[lab.Capability]bool
	if opt.Env.Svc != nil {
		caps = opt.Env.Svc.Info.Caps()
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	if len(leftOut) > 0 {
		a.setStatus(fmt.Sprintf(textFor(lang).LessonsLeftOut, len(leftOut), leftOut[0].Error()), true)
	}
	a.c = &common{st: NewStyles(true, !noColor), keys: keyMapFor(lang), env: opt.Env, lang: lang,
		progress: prog, caps: caps, now: time.Now}
	a.list = newListPane(a.c)
	a.lesson = newLessonPane(a.c)
	a.panels = newPanelSet(a.c)
	a.panels.markActive()
	a.help = newHelpOverlay(a.c)
	a.spin = spinner.New(spinner.WithSpinner(spinner.Line))
	a.list.SetLessons(a.lessons[lang])

	start := opt.Start
	if start == "" {
		start = prog.Last
	}
	if a.find(start) == nil && len(a.lessons[lang]) > 0 {
		start = a.lessons[lang][0].ID
	}
	if start != "" {
		a.list.Select(start)
		a.initCmds = append(a.initCmds, a.open(start))
	}
	return a, nil
}

// Init asks the terminal for its background (light or dark styles) and
// starts the open lesson's panels and resume.
func (a *App) Init() tea.Cmd {
	cmds := append([]tea.Cmd{tea.RequestBackgroundColor}, a.initCmds...)
	a.initCmds = nil
	return tea.Batch(cmds...)
}

// find returns lesson id in the current language, falling back to the
// other one (a lesson may exist in one language only while being written).
func (a *App) find(id string) *lab.Lesson {
	if id == "" {
		return nil
	}
	if l := labs.Find(a.lessons[a.c.lang], id); l != nil {
		return l
	}
	for _, lg := range labs.Langs {
		if l := labs.Find(a.lessons[lg], id); l != nil {
			return l
		}
	}
	return nil
}

func (a *App) setStatus(s string, bad bool) { a.status, a.statusBad = oneLine(s), bad }

func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := a.update(msg)
	if a.observe != nil {
		a.observe(a)
	}
	return a, cmd
}

func (a *App) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.width, a.height = msg.Width, msg.Height
		a.relayout()
	case tea.BackgroundColorMsg:
		_, noColor := os.LookupEnv("NO_COLOR")
		a.c.st = NewStyles(msg.IsDark(), !noColor)
		a.lesson.Rebuild()
	case tea.KeyPressMsg:
		return a.key(msg)
	case stepDoneMsg:
		return a.stepDone(msg)
	case GotoLesson:
		return a.gotoLesson(msg.Lesson)
	case Broadcast:
		a.setStatus(fmt.Sprintf(a.c.t().FromInstructor, msg.Text), false)
	case spinner.TickMsg:
		// The spinner only ticks while a step runs: an idle lab draws
		// nothing but its panels' polls.
		if a.sess == nil || !a.sess.running {
			return nil
		}
		var cmd tea.Cmd
		a.spin, cmd = a.spin.Update(msg)
		a.lesson.spin = a.spin.View()
		return cmd
	case workerActionMsg:
		t := a.c.t()
		if msg.err != nil {
			a.setStatus(fmt.Sprintf(t.ActionFailed, t.Actions[msg.action], msg.name, msg.err), true)
		} else {
			a.setStatus(fmt.Sprintf(t.ActionDone, msg.name, t.Actions[msg.action]), false)
		}
		return a.panels.workers.Refresh(a.sess)
	case progressSavedMsg:
		if msg.err != nil {
			a.setStatus(fmt.Sprintf(a.c.t().ProgressNotSaved, msg.err.Error()), true)
		}
	case runClosedMsg:
		kept := a.retired[:0]
		for _, r := range a.retired {
			if !r.isClosed() {
				kept = append(kept, r)
			}
		}
		a.retired = kept
	case workersDataMsg:
		if a.sess != nil && msg.gen == a.panels.workers.gen && msg.sessions != nil && !a.sess.running {
			a.sess.waiting = msg.sessions
		}
		return a.panels.Update(msg)
	default:
		return a.panels.Update(msg)
	}
	return nil
}

// key handles one key press; every action has a key in the keymap.
func (a *App) key(k tea.KeyPressMsg) tea.Cmd {
	km := a.c.keys
	if a.showHelp {
		a.showHelp = false
		if key.Matches(k, km.Quit) {
			return tea.Quit
		}
		return nil
	}
	if a.confirmAll {
		a.confirmAll = false
		if key.Matches(k, km.Yes) {
			return a.resetAll()
		}
		a.setStatus(a.c.t().ResetAllCancelled, false)
		return nil
	}
	a.status = ""
	switch {
	case key.Matches(k, km.Quit):
		return tea.Quit
	case key.Matches(k, km.Help):
		a.showHelp = true
	case key.Matches(k, km.Lang):
		return a.switchLang()
	case key.Matches(k, km.ResetAll):
		a.confirmAll = true
		a.setStatus(a.c.t().ConfirmResetAll, true)
	case key.Matches(k, km.Reset):
		return a.reset()
	case key.Matches(k, km.Tab):
		a.panels.Cycle(1)
	case key.Matches(k, km.ShiftTab):
		a.panels.Cycle(-1)
	case key.Matches(k, km.Esc):
		if a.focus == focusLesson {
			a.focus = focusList
			if a.sess != nil {
				a.list.Select(a.sess.lessonID)
			}
			a.relayout()
		}
	case key.Matches(k, km.Up):
		a.move(-1)
	case key.Matches(k, km.Down):
		a.move(1)
	case key.Matches(k, km.Enter):
		if a.focus == focusList {
			return a.open(a.list.SelectedID())
		}
		return a.runNext()
	case key.Matches(k, km.PageUp):
		a.lesson.PageUp()
	case key.Matches(k, km.PageDown):
		a.lesson.PageDown()
	case key.Matches(k, km.Top):
		a.lesson.Top()
	case key.Matches(k, km.Bottom):
		a.lesson.Bottom()
	case key.Matches(k, km.Kill):
		return a.workerAction("kill")
	case key.Matches(k, km.Continue):
		return a.workerAction("continue")
	}
	return nil
}

// move is up/down: the list cursor, a choice option, the selected worker
// (when the worker panel is active), else scrolling the lesson.
func (a *App) move(d int) {
	if a.focus == focusList {
		a.list.Move(d)
		return
	}
	s := a.sess
	if s != nil {
		if ch := s.pendingChoice(); ch != nil {
			n := len(steps.Options(ch))
			s.cursor = (s.cursor + d + n) % n
			return
		}
	}
	if a.panels.active == panelWorkers && a.panels.workers.Move(d) {
		return
	}
	a.lesson.Scroll(d)
}

// open shows lesson id, starting a new run unless it is already open. A
// lesson with progress offers to resume (its steps re-run up to where the
// learner was, with the same choices and replay's short waits) or to start
// over; nothing runs until the learner answers.
func (a *App) open(id string) tea.Cmd {
	l := a.find(id)
	if l == nil {
		return nil
	}
	a.focus = focusLesson
	if a.sess != nil && a.sess.lessonID == id {
		a.relayout()
		return nil
	}
	cmds := a.newSession(l)
	s := a.sess
	if lp := a.c.progress.Lessons[id]; lp != nil && lp.Step > 0 && len(s.steps) > 0 {
		s.offer = min(lp.Step, len(s.steps))
		for k, v := range lp.Choices {
			s.run.Choices[k] = v
		}
		for k, v := range lp.Predictions {
			s.run.Predictions[k] = v
		}
	}
	a.c.progress.Last = id
	a.c.progress.Activity = progress.Activity{Lesson: id, Steps: len(s.steps), StepSince: time.Now()}
	if l.ExplainOnly || len(s.steps) == 0 {
		lp := a.c.progress.Of(id)
		lp.Done, lp.Updated = true, time.Now()
	}
	cmds = append(cmds, a.saver.save(a.c.progress), a.advance())
	a.relayout()
	return tea.Batch(cmds...)
}

// newSession replaces the open session (closing the old one in the
// background) and restarts every panel on the new one.
func (a *App) newSession(l *lab.Lesson) []tea.Cmd {
	var cmds []tea.Cmd
	var after <-chan struct{}
	if a.sess != nil {
		cmds = append(cmds, a.sess.closeCmd())
		after = a.sess.closed
		a.retired = append(a.retired, a.sess)
	}
	s := newSession(a.ctx, a.c.env, l, after)
	a.sess = s
	a.list.openID = l.ID
	a.lesson.Set(a.current(), s)
	a.panels.ledger.Set(nil)
	cmds = append(cmds, a.panels.tables.Restart(l), a.panels.queues.Restart(l), a.panels.workers.Restart(s))
	a.relayout() // the queue panel's height depends on the lesson
	return cmds
}

// current is the open lesson in the current language.
func (a *App) current() *lab.Lesson {
	if a.sess == nil {
		return nil
	}
	return a.find(a.sess.lessonID)
}

// advance runs the next step without a key while a resume catches up.
func (a *App) advance() tea.Cmd {
	s := a.sess
	if s == nil || s.running {
		return nil
	}
	s.skipAhead()
	if s.Done() || s.next >= s.catchUp {
		s.catchUp = 0
		return nil
	}
	if st := s.steps[s.next]; isMenu(st) && !s.picked(st) {
		s.catchUp = 0
		return nil
	}
	return a.runStep()
}

// runStep starts step next as a command; keys keep working meanwhile.
func (a *App) runStep() tea.Cmd {
	a.panels.tables.MarkStep()
	cmd := a.sess.start()
	a.lesson.spin = a.spin.View()
	a.lesson.Rebuild()
	return tea.Batch(cmd, a.spin.Tick)
}

// resume takes the offer of a reopened lesson: its steps re-run, without
// keys and with replay's short waits, up to where the learner was.
func (a *App) resume() tea.Cmd {
	s := a.sess
	s.catchUp, s.resumeTo, s.offer = s.offer, s.offer, 0
	s.run.Short = true
	a.setStatus(fmt.Sprintf(a.c.t().Resuming, s.catchUp), false)
	a.lesson.Rebuild()
	return a.advance()
}

// runNext is enter in the lesson: take a reopened lesson's offer to
// resume, the highlighted option of a choice or predict step, or run the
// next step.
func (a *App) runNext() tea.Cmd {
	s := a.sess
	if s != nil && s.offer > 0 && !s.running {
		return a.resume()
	}
	switch {
	case s == nil:
		return nil
	case s.running:
		a.setStatus(a.c.t().StepIsRunning, false)
		return nil
	case len(s.steps) == 0:
		a.setStatus(a.c.t().NothingToRun, false)
		return nil
	case s.Done():
		a.setStatus(a.c.t().LessonComplete, false)
		return nil
	}
	if ch := s.pendingChoice(); ch != nil {
		s.take(ch)
	}
	return a.runStep()
}

// stepDone records a step's result, saves progress, refreshes the panels
// at once and, while catching up, starts the next step.
func (a *App) stepDone(m stepDoneMsg) tea.Cmd {
	s := a.sess
	if s == nil || !s.finish(m) {
		return nil
	}
	a.panels.ledger.Set(s.ledgers)
	lp := a.c.progress.Of(s.lessonID)
	if s.next >= s.resumeTo {
		s.resumeTo = 0 // the re-run reached the learner's place
	}
	if s.resumeTo == 0 {
		lp.Step, lp.Done, lp.Updated = s.next, s.Done(), time.Now()
	}
	// What the room sees: where the learner is, since when, how it went.
	act := &a.c.progress.Activity
	act.Lesson, act.Step, act.Steps, act.StepSince = s.lessonID, s.next, len(s.steps), time.Now()
	switch {
	case m.res.Skipped:
	case m.res.Passed:
		act.Passed++
	default:
		act.Failed++
	}
	if g := m.res.Ledger; g != nil {
		if act.Verdicts == nil {
			act.Verdicts = map[string]string{}
		}
		act.Verdicts[g.Variant] = g.Verdict()
	}
	lp.Choices = map[string]string{}
	for k, v := range s.run.Choices {
		lp.Choices[k] = v
	}
	lp.Predictions = nil
	for k, v := range s.run.Predictions {
		if lp.Predictions == nil {
			lp.Predictions = map[string]string{}
		}
		lp.Predictions[k] = v
	}
	if !m.res.Passed && !m.res.Skipped {
		a.setStatus(fmt.Sprintf(a.c.t().StepFailed, m.idx+1, m.res.Why), true)
	}
	a.lesson.Rebuild()
	a.lesson.ShowStep(m.idx)
	cmds := []tea.Cmd{a.saver.save(a.c.progress), a.advance()}
	if !s.running {
		// Not while a resume races through steps: one poll per panel, once
		// the learner has the keys again.
		cmds = append(cmds, a.panels.tables.Refresh(), a.panels.queues.Refresh(), a.panels.workers.Refresh(s))
	}
	return tea.Batch(cmds...)
}

// reset is r: in the lesson, a new run from the lesson's reset step; in the
// list, the selected lesson's progress.
func (a *App) reset() tea.Cmd {
	id := ""
	if a.focus == focusList {
		id = a.list.SelectedID()
	} else if a.sess != nil {
		id = a.sess.lessonID
	}
	if id == "" {
		return nil
	}
	delete(a.c.progress.Lessons, id)
	if a.sess == nil || a.sess.lessonID != id {
		a.setStatus(fmt.Sprintf(a.c.t().ProgressReset, id), false)
		return a.saver.save(a.c.progress)
	}
	cmds := append(a.restartRun(), a.saver.save(a.c.progress))
	a.setStatus(a.c.t().LessonReset, false)
	return tea.Batch(cmds...)
}

// restartRun gives the open lesson a new Run and runs its reset step.
func (a *App) restartRun() []tea.Cmd {
	l := a.find(a.sess.lessonID)
	cmds := a.newSession(l)
	if s := a.sess; len(s.steps) > 0 && s.steps[0].Kind == "reset" {
		cmds = append(cmds, a.runStep())
	}
	a.relayout()
	return cmds
}

// resetAll is R after y: every lesson's progress, and a new run of the
// open one.
func (a *App) resetAll() tea.Cmd {
	a.c.progress.Lessons = map[string]*progress.Lesson{}
	var cmds []tea.Cmd
	if a.sess != nil {
		cmds = a.restartRun()
	}
	a.setStatus(a.c.t().AllReset, false)
	return tea.Batch(append(cmds, a.saver.save(a.c.progress))...)
}

func findIn(ls []*lab.Lesson, id string) *lab.Lesson {
	for _, l := range ls {
		if l.ID == id {
			return l
		}
	}
	return nil
}

// GotoLesson is the instructor sending the learner to a lesson (its
// number or id), as if they had opened it from the list.
type GotoLesson struct{ Lesson string }

// Broadcast is a line from the instructor for the status line.
type Broadcast struct{ Text string }

func (a *App) gotoLesson(which string) tea.Cmd {
	for _, l := range a.lessons[a.c.lang] {
		if l.ID == which || strconv.Itoa(l.Number) == which {
			a.setStatus(fmt.Sprintf(a.c.t().SentToLesson, l.Number), false)
			return a.open(l.ID)
		}
	}
	return nil
}

// switchLang is l: the other language, same lesson, same step, same Run.
// A lesson with no file in the other language stays, and the status line
// says why.
func (a *App) switchLang() tea.Cmd {
	other := "zh"
	if a.c.lang == "zh" {
		other = "en"
	}
	if len(a.lessons[other]) == 0 {
		msg := fmt.Sprintf(a.c.t().NoLessonsIn, other)
		if err := a.loadErr[other]; err != nil {
			msg += ": " + err.Error()
		}
		a.setStatus(msg, true)
		return nil
	}
	if a.sess != nil && findIn(a.lessons[other], a.sess.lessonID) == nil {
		a.setStatus(fmt.Sprintf(a.c.t().NoTranslation, a.sess.lessonID, other), true)
		return nil
	}
	a.c.lang = other
	a.c.keys = keyMapFor(other)
	a.c.progress.Lang = other
	a.list.SetLessons(a.lessons[other])
	if a.sess != nil {
		a.lesson.Set(a.current(), a.sess)
		if a.sess.next > 0 {
			a.lesson.ShowStep(a.sess.next - 1)
		}
	}
	return a.saver.save(a.c.progress)
}

// workerAction is k or c on the selected worker.
func (a *App) workerAction(action string) tea.Cmd {
	if a.sess == nil {
		return nil
	}
	// The worker panel comes forward so the learner sees what k or c did.
	a.panels.active = panelWorkers
	a.panels.markActive()
	w, ok := a.panels.workers.SelectedStatus()
	t := a.c.t()
	switch {
	case !ok:
		a.setStatus(fmt.Sprintf(t.NoWorkerTo, t.Actions[action]), false)
		return nil
	case w.State == worker.Exited || w.State == worker.Killed:
		a.setStatus(fmt.Sprintf(t.AlreadyState, w.Name, t.States[w.State]), false)
		return nil
	case action == "continue" && w.State != worker.Paused:
		a.setStatus(fmt.Sprintf(t.NotPaused, w.Name, t.States[w.State]), false)
		return nil
	}
	a.setStatus(fmt.Sprintf(t.Acting, t.Actions[action], w.Name), false)
	return workerCmd(a.sess.run, w.Name, action)
}

// relayout sizes every pane for the terminal and the focus.
func (a *App) relayout() {
	W, H := a.width, a.height
	if W <= 0 || H <= 0 {
		return
	}
	bodyH := max(H-2, 3) // header and footer lines
	a.help.SetSize(W, bodyH)
	switch {
	case W >= 160:
		a.mode = modeWide
		listW := min(max(W/6, 28), 40)
		panelsW := min(max(W*2/5, 56), 90)
		a.list.SetSize(listW, bodyH)
		a.lesson.SetSize(W-listW-panelsW, bodyH)
		a.panels.SetSize(panelsW, bodyH)
	case a.focus == focusList:
		a.mode = modeList
		a.list.SetSize(W, bodyH)
	case W >= 120:
		a.mode = modeSide
		panelsW := W * 9 / 20
		a.lesson.SetSize(W-panelsW, bodyH)
		a.panels.SetSize(panelsW, bodyH)
	case bodyH < 12:
		// Too short to share: the lesson alone (the panels come back when
		// the terminal grows).
		a.mode = modeLessonOnly
		a.lesson.SetSize(W, bodyH)
	default:
		a.mode = modeSplit
		lessonH := max(bodyH*11/20, 6)
		a.lesson.SetSize(W, lessonH)
		a.panels.SetSize(W, bodyH-lessonH)
	}
	a.list.active = a.focus == focusList
	a.lesson.active = a.focus == focusLesson
}

// View draws the screen: a header line, the body, a footer line.
func (a *App) View() tea.View {
	v := tea.NewView(a.render())
	v.AltScreen = true
	v.WindowTitle = a.c.t().AppName
	return v
}

func (a *App) render() string {
	if a.width <= 0 || a.height <= 0 {
		return ""
	}
	var body string
	switch {
	case a.showHelp:
		body = a.help.View()
	case a.mode == modeWide:
		body = joinH(a.list.View(), a.lesson.View(), a.panels.View())
	case a.mode == modeList:
		body = a.list.View()
	case a.mode == modeSide:
		body = joinH(a.lesson.View(), a.panels.View())
	case a.mode == modeLessonOnly:
		body = a.lesson.View()
	default:
		body = a.lesson.View() + "\n" + a.panels.View()
	}
	return a.header() + "\n" + body + "\n" + a.footer()
}

// joinH puts equal-height blocks side by side (each already exact width).
func joinH(blocks ...string) string {
	cols := make([][]string, len(blocks))
	n := 0
	for i, b := range blocks {
		cols[i] = strings.Split(b, "\n")
		n = max(n, len(cols[i]))
	}
	var sb strings.Builder
	for r := 0; r < n; r++ {
		if r > 0 {
			sb.WriteByte('\n')
		}
		for _, c := range cols {
			if r < len(c) {
				sb.WriteString(c[r])
			}
		}
	}
	return sb.String()
}

func (a *App) header() string {
	st, t := a.c.st, a.c.t()
	left := st.Header.Render(" "+t.AppName) + st.Dim.Render(t.LangLabel+a.c.lang)
	if l := a.current(); l != nil {
		left += st.Dim.Render(fmt.Sprintf(t.LessonN, l.Number)) + oneLine(l.Title)
	}
	right := st.Dim.Render(t.HelpQuit)
	room := a.width - displayWidth(right)
	return fitLine(fitLine(left, max(room-1, 0))+" "+right, a.width)
}

func (a *App) footer() string {
	st := a.c.st
	if a.status != "" {
		s := st.Status
		if a.statusBad {
			s = st.Bad
		}
		return fitLine(" "+s.Render(a.status), a.width)
	}
	// As many hints as fit, most useful first.
	hints := a.c.t().HintsList
	if a.focus == focusLesson {
		hints = a.c.t().HintsLesson
	}
	hint := ""
	for _, h := range hints {
		if displayWidth(hint)+2+displayWidth(h) > a.width {
			break
		}
		hint += "  " + h
	}
	return fitLine(st.Footer.Render(strings.TrimPrefix(hint, " ")), a.width)
}

// shutdown ends the open run and waits for runs closing in the background,
// so no worker outlives the lab; then it writes the progress a last time.
func (a *App) shutdown() {
	for _, s := range append(a.retired, a.sess) {
		if s != nil && !s.isClosed() {
			s.closeNow(5 * time.Second)
		}
	}
	if a.saver != nil {
		if cmd := a.saver.save(a.c.progress); cmd != nil {
			cmd()
		}
	}
}

// plainView is the screen without escape codes (tests, snapshots).
func plainView(s string) string { return ansi.Strip(s) }

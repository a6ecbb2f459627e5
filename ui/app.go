package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/challenge"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
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
	// programs are the learner's challenge programs (nil where the screen
	// runs none: a workshop); prompt is where p sets one.
	programs *programs
	prompt   *programPrompt

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
	// statusWhile, when set, is how long the status holds: a status about
	// a state (a step running, a resume, progress not saved) goes with it,
	// not at the next key.
	statusWhile func() bool
	unsaved     bool // the last save of progress failed
	// From the instructor: a message that stays until x, a countdown.
	banner     string
	timerUntil time.Time
	timerGen   int
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
		// The challenges close the built-in list: the learner's own program
		// in the pipeline (package challenge).
		if cl, cerr := challenge.Lessons(lg); cerr == nil && opt.LessonsDir == "" {
			ls = append(ls, cl...)
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
	a.prompt = newProgramPrompt(a.c)
	if opt.RunPrograms {
		a.programs = newPrograms(prog)
		opt.Env.Programs = a.programs
		if a.saver != nil {
			a.saver.fold = a.programs.fold
		}
	}
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
	if l := a.find(start); l != nil {
		a.list.Select(l.ID) // by id: `lab open 31` names it by number
		a.initCmds = append(a.initCmds, a.open(l.ID))
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

// timerTick redraws the instructor's countdown in a second (one tick,
// re-armed from its result, tagged with the timer it counts).
func (a *App) timerTick() tea.Cmd {
	gen := a.timerGen
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return timerTickMsg{gen: gen} })
}

func (a *App) setStatus(s string, bad bool) {
	a.status, a.statusBad, a.statusWhile = oneLine(s), bad, nil
}

// setStatusWhile sets a status that shows only while holds is true.
func (a *App) setStatusWhile(s string, bad bool, holds func() bool) {
	a.setStatus(s, bad)
	a.statusWhile = holds
}

// statusNow is the status if it still holds.
func (a *App) statusNow() string {
	if a.statusWhile != nil && !a.statusWhile() {
		return ""
	}
	return a.status
}

func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := a.update(msg)
	switch msg.(type) {
	case stepDoneMsg, tea.KeyPressMsg:
		// A menu came or went: the split layout gives its options room.
		if a.mode == modeSplit && a.lesson.h != a.splitLessonH(a.width, max(a.height-2, 3)) {
			a.relayout()
		}
	}
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
		a.banner = oneLine(msg.Text)
	case Timer:
		a.timerUntil = msg.Until
		a.timerGen++
		return a.timerTick()
	case timerTickMsg:
		if msg.gen == a.timerGen && time.Now().Before(a.timerUntil) {
			return a.timerTick()
		}
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
		a.unsaved = msg.err != nil
		if msg.err != nil {
			a.setStatusWhile(fmt.Sprintf(a.c.t().ProgressNotSaved, msg.err.Error()), true, func() bool { return a.unsaved })
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
	if a.prompt.open {
		cmd, done, argv := a.prompt.Key(k)
		if done && argv != nil {
			a.programs.set(a.prompt.name, argv, cwd())
			a.setStatus(fmt.Sprintf(a.c.t().ProgramSet, a.prompt.name), false)
			return tea.Batch(cmd, a.saver.save(a.c.progress))
		}
		return cmd
	}
	a.status = ""
	switch {
	case a.banner != "" && key.Matches(k, km.Dismiss):
		a.banner = ""
	case key.Matches(k, km.Program) && a.openChallenge() != "":
		if a.programs == nil {
			a.setStatus(fmt.Sprintf(a.c.t().ProgramsNotHere, a.openChallenge()), true)
			return nil
		}
		argv, _, _ := a.programs.Program(a.openChallenge())
		return a.prompt.Open(a.openChallenge(), argv, a.width)
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
	case key.Matches(k, km.Short) && a.focus == focusLesson && a.sess != nil:
		a.toggleShortWaits()
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
			switch {
			case s.selected(ch) < 0 && d > 0:
				s.cursor = 0
			case s.selected(ch) < 0:
				s.cursor = n - 1
			default:
				s.cursor = (s.cursor + d + n) % n
			}
			s.moved = true
			return
		}
	}
	if a.panels.active == panelWorkers && a.panels.workers.Move(d) {
		return
	}
	a.lesson.Scroll(d)
}

// nextLessonID is the lesson after id in the list ("" for the last).
func (a *App) nextLessonID(id string) string {
	for i, l := range a.list.lessons {
		if l.ID == id && i+1 < len(a.list.lessons) {
			return a.list.lessons[i+1].ID
		}
	}
	return ""
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
	id = l.ID // `lab open 31` names it by number; progress knows it by id
	a.focus = focusLesson
	if a.sess != nil && a.sess.lessonID == id {
		a.relayout()
		return nil
	}
	cmds := a.newSession(l)
	s := a.sess
	if lp := a.c.progress.Lessons[id]; lp != nil && lp.Done && len(s.steps) > 0 {
		// A finished lesson says so: enter opens the next, r starts over;
		// "resume" would re-run every step for nothing.
		s.finished = true
	} else if lp != nil && lp.Step > 0 && len(s.steps) > 0 {
		s.offer = min(lp.Step, len(s.steps))
		for k, v := range lp.Choices {
			s.run.Choices[k] = v
		}
		for k, v := range lp.Predictions {
			s.run.Predictions[k] = v
		}
		s.run.DecideFromServer() // the saved path may be another server's
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
	a.panels.showsChaos = hasChaos(l)
	a.panels.lessonOpened(l)
	cmds = append(cmds, a.panels.tables.Restart(l, s.run), a.panels.chaos.Restart(s.run), a.panels.queues.Restart(l, s.run), a.panels.workers.Restart(s))
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

// plainView is the screen without escape codes (tests, snapshots).
func plainView(s string) string { return ansi.Strip(s) }

// openChallenge is the name of the challenge open in the lesson pane, ""
// when the open lesson is not one.
func (a *App) openChallenge() string {
	if a.sess == nil {
		return ""
	}
	name, ok := strings.CutPrefix(a.sess.lessonID, "challenge-")
	if !ok {
		return ""
	}
	return name
}

// toggleShortWaits is w: before a run's first step the learner may take
// replay's short waits (a 40 s lease becomes 4 s) for the whole run. The
// servers get the short values and the text shows them, so what the lesson
// shows stays what happened; once a step ran, the values are in use.
func (a *App) toggleShortWaits() {
	s, t := a.sess, a.c.t()
	if s.running || s.next > 0 {
		a.setStatus(t.ShortLater, false)
		return
	}
	s.run.Short = !s.run.Short
	if s.run.Short {
		a.setStatus(t.ShortOn, false)
	} else {
		a.setStatus(t.ShortOff, false)
	}
	a.lesson.Rebuild()
}

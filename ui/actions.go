package ui

import (
	"fmt"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/worker"
)

// The learner's actions beyond running steps (reset, language, workers)
// and the instructor's (go to a lesson, a broadcast).

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

// Broadcast is a line from the instructor: a banner on the header line
// until the learner dismisses it (x).
type Broadcast struct{ Text string }

// Timer is the instructor's countdown, shown on the header line until
// Until; a zero Until takes it away.
type Timer struct{ Until time.Time }

// timerTickMsg redraws the countdown each second; gen drops a stale one.
type timerTickMsg struct{ gen int }

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
		a.showLedgers()
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

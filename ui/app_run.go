package ui

// Running a lesson's steps: enter, the catch-up of a resume, one step.

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
)

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
	if l := a.find(a.sess.lessonID); l != nil {
		a.panels.tables.focus = namedValues(l, a.sess.steps[a.sess.next])
	}
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
	a.setStatusWhile(fmt.Sprintf(a.c.t().Resuming, s.catchUp), false, func() bool { return a.sess == s && s.catchUp > 0 })
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
	if s != nil && s.finished && !s.running && s.next == 0 {
		if next := a.nextLessonID(s.lessonID); next != "" {
			return a.open(next)
		}
		a.setStatus(a.c.t().LessonComplete, false)
		return nil
	}
	switch {
	case s == nil:
		return nil
	case s.running:
		step := s.next
		a.setStatusWhile(a.c.t().StepIsRunning, false, func() bool { return a.sess == s && s.running && s.next == step })
		return nil
	case len(s.steps) == 0:
		a.setStatus(a.c.t().NothingToRun, false)
		return nil
	case s.Done() && s.failedLast():
		a.setStatus(a.c.t().ChallengeNotPassed, false)
		return nil
	case s.Done():
		a.setStatus(a.c.t().LessonComplete, false)
		return nil
	}
	if ch := s.pendingChoice(); ch != nil {
		if s.selected(ch) < 0 {
			a.setStatus(a.c.t().PickFirst, false)
			return nil
		}
		s.take(ch)
	}
	return a.runStep()
}

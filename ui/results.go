package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
)

// A step's result reaching the screen: the ledgers it adds, the progress
// it saves, the panels it refreshes.

// showLedgers hands the session's ledgers to the panel, each labelled as
// its step is in the language shown (the run wrote the label it started
// with).
func (a *App) showLedgers() {
	s := a.sess
	if s == nil {
		a.panels.ledger.Set(nil)
		return
	}
	shown := append([]lab.Ledger(nil), s.ledgers...)
	if l := a.current(); l != nil {
		steps := l.Steps()
		for i, idx := range s.ledgerSteps {
			if idx < len(steps) && steps[idx].Kind == "ledger" {
				shown[i].Label = steps[idx].Attrs["label"]
			}
		}
	}
	a.panels.ledger.Set(shown)
}

// stepDone records a step's result, saves progress, refreshes the panels
// at once and, while catching up, starts the next step.
func (a *App) stepDone(m stepDoneMsg) tea.Cmd {
	s := a.sess
	if s == nil || !s.finish(m) {
		return nil
	}
	a.showLedgers()
	lp := a.c.progress.Of(s.lessonID)
	if r := m.res; !r.Skipped && !s.run.Short {
		if lp.Took == nil {
			lp.Took = map[int]int64{}
		}
		lp.Took[m.idx] = r.DurationMS
	}
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
		act.FailStep, act.FailWhy = "", ""
	default:
		act.Failed++
		why, _, _ := strings.Cut(m.res.Why, "\n")
		act.FailStep, act.FailWhy = fmt.Sprintf("[%d/%d] %s", m.idx+1, len(s.steps), m.res.Kind), why
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
		a.setStatus(fmt.Sprintf(a.c.t().StepFailed, m.idx+1, localObserved(a.c.lang, m.res.Why)), true)
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

package ui

// The lesson pane's action area, under the rule: what enter does now, a
// running step, a menu, an offer, and the sessions waiting on a lock.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rmlab/lab/steps"
)

// actionHeight is the lines under the rule: fixed per state so the text
// does not jump while a timer counts.
func (p *lessonPane) actionHeight() int {
	if p.sess != nil && (p.sess.pendingChoice() != nil || p.sess.offer > 0) {
		// As many lines as the wrapped prompt and options take: every
		// option must be read whole to choose. The layout gives a menu
		// the lines it needs (splitLessonH); one line of text stays.
		return min(len(p.action(p.textWidth())), max(p.h-2-2, 1))
	}
	if p.sess != nil && !p.sess.running && p.waitLine() != "" {
		// The wait line wraps (sessions, their times, InnoDB's limit):
		// every line of it, and at least two, so a timer that gains a
		// digit rarely moves the text.
		return min(max(len(p.action(p.textWidth())), 3), max(p.h-2-2, 1))
	}
	return 2
}

// rule is the line between the text and the action: it says how many lines
// of text are below the view, so Enter never runs a step whose text the
// learner has not had on screen without being told.
func (p *lessonPane) rule(w, shown int) string {
	below := p.vp.TotalLineCount() - p.vp.YOffset() - shown
	if below <= 0 {
		return strings.Repeat("-", w)
	}
	more := fmt.Sprintf(p.c.t().MoreBelow, below)
	if n := displayWidth(more); n+4 <= w {
		return "-- " + more + " " + strings.Repeat("-", w-n-4)
	}
	return fitLine(more, w)
}

// action is the line(s) under the rule.
func (p *lessonPane) action(w int) []string {
	st, t := p.c.st, p.c.t()
	s := p.sess
	var out []string
	switch {
	case p.lesson == nil:
		out = []string{st.Dim.Render(t.OpenHint)}
	case p.lesson.ExplainOnly || len(p.lesson.Steps()) == 0:
		out = []string{st.Dim.Render(t.ExplainOnly)}
	case s == nil:
		out = []string{st.Dim.Render(t.StartHint)}
	case s.finished && !s.running && s.next == 0:
		out = wrapStyled(st.Accent, t.FinishedBefore, w)
		out = append(out, wrapStyled(st.Dim, t.FinishedHint, w)...)
	case s.offer > 0:
		// Both halves of the offer, wrapped, so "r: start over" is whole at
		// 80 columns.
		out = wrapStyled(st.Accent, fmt.Sprintf(t.ResumeOffer, s.offer, len(s.steps)), w)
		// Each key with its words: "r:" and "start over" stay together.
		if displayWidth(t.ResumeHint) <= w {
			out = append(out, st.Dim.Render(t.ResumeHint))
		} else {
			for _, part := range strings.Split(t.ResumeHint, "   ") {
				out = append(out, wrapStyled(st.Dim, strings.TrimSpace(part), w)...)
			}
		}
	case s.running:
		st0 := s.steps[s.next]
		line := fmt.Sprintf(t.RunningStep, p.spin, s.next+1, len(s.steps), st0.Kind,
			p.c.now().Sub(s.runStart).Round(100*time.Millisecond))
		// A wait says how long it took the last time here: 35 s of a
		// spinner reads as a hang when nothing says that is normal.
		if lp := p.c.progress.Lessons[s.lessonID]; lp != nil && !s.run.Short {
			if ms := lp.Took[s.next]; ms >= 1000 {
				line += fmt.Sprintf(t.Usually, (time.Duration(ms) * time.Millisecond).Round(100*time.Millisecond))
			}
		}
		// A sleep counts down: 40 s of a spinner reads as a hang.
		if st0.Kind == "sleep" {
			if d, err := time.ParseDuration(s.run.Expand(st0.Attrs["for"])); err == nil && d > 0 {
				unit := time.Second
				if d < 10*time.Second {
					unit = 100 * time.Millisecond
				}
				left := max(d-p.c.now().Sub(s.runStart), 0).Round(unit)
				line += fmt.Sprintf(t.SleepLeft, left, d)
			}
		}
		out = []string{st.Warn.Render(line)}
		if s.catchUp > s.next {
			out = append(out, st.Dim.Render(fmt.Sprintf(t.CatchingUp, s.catchUp)))
		}
	case s.pendingChoice() != nil:
		// The menu in the current language: the session's steps are the
		// language the run started in; the pane's lesson is the one shown.
		ch := p.shown(s.pendingChoice())
		prompt := ch.Attrs["prompt"]
		if prompt == "" {
			prompt = fmt.Sprintf(t.Choose, ch.Attrs["name"])
		}
		keys := t.ChoiceKeys
		if ch.Kind == "predict" {
			keys = t.PredictKeys
		}
		// The prompt and every option wrap inside the pane: the learner
		// must read each option whole to choose.
		out = wrapStyled(st.Bold, oneLine(prompt), w)
		if last := len(out) - 1; displayWidth(out[last])+displayWidth(keys) <= w {
			out[last] += st.Dim.Render(keys)
		} else {
			out = append(out, st.Dim.Render(strings.TrimSpace(keys)))
		}
		for i, o := range steps.Options(ch) {
			mark, style := "  ", st.Observed
			if i == s.selected(ch) {
				mark, style = "> ", st.Selected
			}
			for j, l := range wrapText(oneLine(o.Name)+": "+oneLine(o.Text), max(w-4, 10)) {
				if j == 0 {
					l = mark + l
				} else {
					l = "    " + l
				}
				out = append(out, style.Render(l))
			}
		}
	case s.Done() && s.failedLast():
		out = []string{st.Bad.Render(t.NotPassed) + st.Dim.Render(t.NotPassedHint)}
	case s.Done():
		out = []string{st.Good.Render(t.Complete) + st.Dim.Render(t.CompleteHint)}
	default:
		st0 := s.steps[s.next]
		line := st.Accent.Render(fmt.Sprintf(t.RunStep, s.next+1, len(s.steps), st0.Kind))
		if r, ok := s.results[s.next-1]; ok && !r.Passed && !r.Skipped {
			line += st.Bad.Render(t.LastFailed)
		}
		out = []string{line}
	}
	if s != nil && !s.running {
		// Wrapped, never cut: "…then 12…" told the learner nothing.
		if wl := p.waitLine(); wl != "" {
			out = append(out, wrapStyled(st.Warn, wl, w)...)
		} else {
			out = append(out, "")
		}
	}
	return out
}

// waitLine shows statements still blocked on a lock, counting up.
func (p *lessonPane) waitLine() string {
	s := p.sess
	var names []string
	for n, w := range s.waiting {
		if w {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		part := fmt.Sprintf(p.c.t().SessionWaiting, n)
		if t, ok := s.waitSince[n]; ok {
			part += " " + p.c.now().Sub(t).Round(100*time.Millisecond).String()
		}
		if lw := s.run.LockWait(n); lw > 0 {
			part += fmt.Sprintf(p.c.t().LockWaitLimit, lw.String())
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ") + p.c.t().BlockedNote
}

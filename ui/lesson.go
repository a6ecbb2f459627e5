package ui

import (
	"charm.land/lipgloss/v2"
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/steps"
)

// lessonPane shows the open lesson: prose (glamour) up to the next step,
// every step run so far with what it sent and what came back, the next
// step's statements, and below a rule the action line: the spinner while a
// step runs, a choice menu, a blocked statement's wait, or what enter does.
type lessonPane struct {
	c       *common
	w, h    int
	active  bool
	lesson  *lab.Lesson // in the current language
	sess    *session
	vp      viewport.Model
	prose   proseCache
	spin    string // spinner frame, set by the App on its tick
	anchors map[int]int
	// The viewport re-wraps every visible line on each View; the text only
	// changes on a step, a scroll or a resize, so its render is kept.
	contentGen int
	vpKey      [4]int
	vpView     string
}

func newLessonPane(c *common) *lessonPane {
	vp := viewport.New()
	vp.MouseWheelEnabled = false
	return &lessonPane{c: c, vp: vp, anchors: map[int]int{}}
}

// SetSize lays the text out for a new size and keeps the reader's place:
// the step result at or above the top line stays at the top, and the lines
// read past it scale with the new width (text rewraps; a line offset alone
// would land elsewhere in the lesson).
func (p *lessonPane) SetSize(w, h int) {
	if w == p.w {
		p.h = h
		p.Rebuild()
		return
	}
	step, total := p.topStep(), p.vp.TotalLineCount()
	past := p.vp.YOffset()
	if step >= 0 {
		past -= p.anchors[step]
	}
	oldW := p.textWidth()
	p.w, p.h = w, h
	p.Rebuild()
	if total == 0 || p.vp.YOffset() == 0 && past == 0 && step < 0 {
		return
	}
	past = past * oldW / p.textWidth()
	if a, ok := p.anchors[step]; ok {
		p.vp.SetYOffset(a + past)
	} else {
		p.vp.SetYOffset(past)
	}
}

func (p *lessonPane) Update(tea.Msg) tea.Cmd { return nil }

// Set shows a lesson (in the current language) and its session.
func (p *lessonPane) Set(l *lab.Lesson, s *session) {
	changed := p.lesson == nil || l == nil || p.lesson.ID != l.ID || p.sess != s
	p.lesson, p.sess = l, s
	p.Rebuild()
	if changed {
		p.vp.GotoTop()
	}
}

// Scroll moves the text by n lines (negative: up).
func (p *lessonPane) Scroll(n int) {
	if n < 0 {
		p.vp.ScrollUp(-n)
	} else {
		p.vp.ScrollDown(n)
	}
}

func (p *lessonPane) PageUp()   { p.vp.PageUp() }
func (p *lessonPane) PageDown() { p.vp.PageDown() }
func (p *lessonPane) Top()      { p.vp.GotoTop() }
func (p *lessonPane) Bottom()   { p.vp.GotoBottom() }

// ShowStep scrolls to what step idx sent back: to the end when everything
// from there on fits (the next step's statements stay in view), else with
// the result at the top.
func (p *lessonPane) ShowStep(idx int) {
	a, ok := p.anchors[idx]
	if !ok {
		return
	}
	if p.vp.TotalLineCount()-a <= p.vp.Height() {
		p.vp.GotoBottom()
		return
	}
	p.vp.SetYOffset(a)
}

// textWidth is the width prose and steps are laid out in.
func (p *lessonPane) textWidth() int { return max(p.w-2, 1) }

// Rebuild lays the text out again: after a step, a resize, a language or
// style switch. It is the only place prose is rendered.
func (p *lessonPane) Rebuild() {
	iw := p.textWidth()
	ih := p.h - 2
	p.vp.SetWidth(iw)
	p.vp.SetHeight(max(ih-1-p.actionHeight(), 1))
	if p.lesson == nil {
		p.vp.SetContentLines(nil)
		p.contentGen++
		return
	}
	lines, anchors := p.content(iw)
	p.anchors = anchors
	p.vp.SetContentLines(lines)
	p.contentGen++
}

// viewport returns the viewport's render, cached by what it depends on.
func (p *lessonPane) viewport() string {
	k := [4]int{p.vp.YOffset(), p.vp.Width(), p.vp.Height(), p.contentGen}
	if k != p.vpKey || p.vpView == "" {
		p.vpKey, p.vpView = k, p.vp.View()
	}
	return p.vpView
}

// content renders the lesson text and where each step's output begins.
func (p *lessonPane) content(w int) ([]string, map[int]int) {
	st := p.c.st
	l, s := p.lesson, p.sess
	var out []string
	anchors := map[int]int{}
	if miss := p.missing(); miss != "" {
		out = append(out, wrapStyled(st.Warn, fmt.Sprintf(p.c.t().Needs, miss), w)...)
		out = append(out, "")
	}
	total := len(l.Steps())
	next := total
	if s != nil {
		next = s.next
	}
	for bi, b := range l.Blocks {
		if b.Step == nil {
			text := onPath(b.Prose, s)
			if text == "" {
				continue
			}
			// The databases by the names the panels show
			// (blog_idempotency_lab_alice), as the SQL shown is.
			if s != nil && s.run != nil && s.run.Env != nil && s.run.Env.Svc != nil {
				text = s.run.Env.Svc.Names.SQL(text)
			}
			key := fmt.Sprintf("%s/%s/%d/%x", l.Lang, l.ID, bi, fnv32(text))
			out = append(out, p.prose.lines(key, text, w, st)...)
			out = append(out, "")
			continue
		}
		i := b.Step.Index
		if s == nil || i > next {
			break
		}
		if i == next {
			out = append(out, p.preview(b.Step, total, w)...)
			break
		}
		lines, anchor := p.result(b.Step, s.results[i], total, w)
		anchors[i] = len(out) + anchor
		out = append(out, lines...)
		out = append(out, "")
	}
	return out, anchors
}

// missing names capabilities the lesson needs and the servers lack.
func (p *lessonPane) missing() string {
	if p.c.caps == nil {
		return ""
	}
	return strings.Join(p.lesson.Unmet(p.c.caps), ", ")
}

// stepTitle is "[3/17] sql session=B blocks", attributes expanded the way
// the run sends them (pause-at=after-${first}-commit shows the option).
func (p *lessonPane) stepTitle(s *lab.Step, total int) string {
	expand := func(v string) string { return v }
	if p.sess != nil {
		expand = p.sess.run.Expand
	}
	var attrs []string
	for k, v := range s.Attrs {
		// A predict step's answer= stays hidden until the learner picked.
		if k == "label" || k == "prompt" || (k == "answer" && s.Kind == "predict") {
			continue
		}
		if v == "" {
			attrs = append(attrs, k)
		} else {
			attrs = append(attrs, k+"="+expand(v))
		}
	}
	sort.Strings(attrs)
	t := fmt.Sprintf("[%d/%d] %s", s.Index+1, total, s.Kind)
	if len(attrs) > 0 {
		t += " " + strings.Join(attrs, " ")
	}
	return oneLine(t)
}

// titleLines is a step's title wrapped to the pane (a reset's list of
// queues and exchanges is long) with its status after it, on the last line
// when it fits there.
func (p *lessonPane) titleLines(s *lab.Step, total int, status string, w int) []string {
	lines := wrapStyled(p.c.st.Accent, p.stepTitle(s, total), w)
	last := len(lines) - 1
	if lipgloss.Width(lines[last])+2+lipgloss.Width(status) <= w {
		lines[last] += "  " + status
		return lines
	}
	return append(lines, "  "+status)
}

// preview shows the next step before it runs: what it will send.
func (p *lessonPane) preview(s *lab.Step, total, w int) []string {
	st := p.c.st
	state := p.c.t().StateNext
	if p.sess != nil && p.sess.running {
		state = p.c.t().StateRunning
	}
	out := p.titleLines(s, total, st.Warn.Render(state), w)
	if isMenu(s) {
		if pr := s.Attrs["prompt"]; pr != "" {
			out = append(out, wrapStyled(st.Bold, "  "+pr, w)...)
		}
		return out
	}
	for _, line := range p.willSend(s) {
		out = append(out, styleLines(st.Code, wrapCode("  "+line, w))...)
	}
	return out
}

// willSend is the text a step will send, namespaced and expanded when the
// run can tell (sql steps), else the block body.
func (p *lessonPane) willSend(s *lab.Step) []string {
	run := p.sess.run
	if s.Kind == "sql" && run.Svc() != nil {
		if stmts, err := run.Statements(s); err == nil {
			return terminate(stmts)
		}
	}
	body := strings.TrimRight(s.Body, "\n")
	if body == "" {
		return nil
	}
	return strings.Split(asciiSafe(run.Expand(body)), "\n")
}

// terminate ends SQL statements with ";" as a mysql client shows them.
func terminate(stmts []string) []string {
	var out []string
	for _, s := range stmts {
		s = strings.TrimSpace(s)
		if !strings.HasSuffix(s, ";") {
			s += ";"
		}
		out = append(out, strings.Split(asciiSafe(s), "\n")...)
	}
	return out
}

// result shows a step that ran: its title and status, then what it sent
// and what came back. The anchor is where the screen scrolls after the step
// ran: the title when nothing was echoed, else the "returned" rule, since
// the learner read the statements in the preview already. A sql step's
// observation interleaves each statement with its answer (like a mysql
// client), so its sent list is not repeated, as in replay's transcript.
func (p *lessonPane) result(s *lab.Step, r lab.Result, total, w int) (lines []string, anchor int) {
	st, t := p.c.st, p.c.t()
	status := st.Good.Render(t.ResultOK)
	switch {
	case r.Skipped:
		status = st.Dim.Render(t.ResultSkipped)
	case !r.Passed:
		status = st.Bad.Render(t.ResultFailed)
	}
	if r.Elapsed >= time.Millisecond && !r.Skipped {
		status += st.Dim.Render(" " + r.Elapsed.Round(time.Millisecond).String())
	}
	lines = p.titleLines(s, total, status, w)
	if r.Skipped {
		why := r.Why
		// A step off the chosen path: said in the screen's language (the
		// run writes it in English for replay's report).
		if when, ok := strings.CutPrefix(why, "not on this path ("); ok {
			why = fmt.Sprintf(t.NotOnPath, strings.TrimSuffix(when, ")"))
		}
		return append(lines, wrapStyled(st.Dim, "  "+oneLine(why), w)...), 0
	}
	if s.Kind != "sql" && len(r.Sent) > 0 {
		sent := r.Sent
		if s.Kind == "reset" || s.Kind == "ledger" {
			sent = terminate(sent)
		}
		for _, line := range sent {
			for _, l := range strings.Split(line, "\n") {
				// A command's note is the lab's words (a clean shutdown):
				// said in the screen's language, then made safe.
				l = asciiSafe(localObserved(p.c.lang, l))
				lines = append(lines, styleLines(st.Code, wrapCode("  "+plain.Text(l), w))...)
			}
		}
		anchor = len(lines)
		lines = append(lines, st.Dim.Render(t.Returned))
	}
	if s.Kind == "predict" && r.Passed && p.sess != nil {
		return append(lines, p.predictResult(s, w)...), anchor
	}
	obs := strings.TrimRight(r.Observed, "\n")
	// A choice's and a ledger's line are the screen's own words, said in
	// the language shown (the run wrote them in the one it started in).
	if s.Kind == "choice" && r.Passed && p.sess != nil {
		if o, ok := p.chosen(s); ok {
			obs = fmt.Sprintf("%s → %s: %s", s.Attrs["name"], o.Name, oneLine(o.Text))
		}
	}
	if s.Kind == "ledger" && r.Ledger != nil {
		obs = ledgerLine(t, *r.Ledger, s.Attrs["label"])
	}
	if obs != "" {
		// What a step observed came from tables, messages, keys and
		// programs: plain text, line by line, before the terminal.
		ls := strings.Split(obs, "\n")
		for i := range ls {
			ls[i] = asciiSafe(plain.Text(localObserved(p.c.lang, ls[i])))
		}
		for _, l := range reflowTables(ls, w-2) {
			lines = append(lines, wrapStyled(st.Observed, "  "+l, w)...)
		}
	}
	if !r.Passed && r.Why != "" {
		lines = append(lines, wrapStyled(st.Bad, fmt.Sprintf(t.FailedWhy, localObserved(p.c.lang, oneLine(r.Why))), w)...)
	}
	return lines, anchor
}

// wrapStyled wraps plain text to w cells and styles each line.
func wrapStyled(style interface{ Render(...string) string }, text string, w int) []string {
	lines := wrapText(text, w)
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return lines
}

func (p *lessonPane) View() string {
	st, t := p.c.st, p.c.t()
	iw := p.textWidth()
	title := t.NoLessonOpen
	if p.lesson != nil {
		title = fmt.Sprintf("%d. %s", p.lesson.Number, oneLine(p.lesson.Title))
		if s := p.sess; s != nil && len(s.steps) > 0 {
			prog := fmt.Sprintf(t.PaneStep, min(s.next+1, len(s.steps)), len(s.steps))
			if s.Done() {
				prog = t.PaneDone
			}
			// pane() adds a space each side and a border corner.
			title = fitLine(title, max(iw-4-displayWidth(prog), 1)) + prog
		}
	}
	act := p.action(iw)
	body := strings.Split(p.viewport(), "\n")
	body = body[:min(len(body), p.textLines(len(act)))]
	body = append(body, st.Dim.Render(p.rule(iw, len(body))))
	body = append(body, act...)
	return pane(st, p.active, title, body, p.w, p.h)
}

// textLines is how many lines of text the pane shows above an action area
// of act lines: the layout's, unless the action grew since (a wait line's
// timer gains a digit and wraps, a second session starts waiting). Then the
// text gives up the lines (the rule counts them below), never the action;
// the next layout settles it.
func (p *lessonPane) textLines(act int) int {
	return min(p.vp.Height(), max(p.h-2-1-act, 1))
}

// topStep is the step whose result begins at or above the text's top line
// (-1: the text is above every result): the reader's place.
func (p *lessonPane) topStep() int {
	step := -1
	for i, line := range p.anchors {
		if line <= p.vp.YOffset() && (step < 0 || line > p.anchors[step]) {
			step = i
		}
	}
	return step
}

// isMenu reports whether a step asks the learner to pick an option first:
// a choice (which picks the path) or a predict (which does not).
func isMenu(s *lab.Step) bool { return s.Kind == "choice" || s.Kind == "predict" }

// shown is a session step as the pane's lesson has it (the language shown),
// or the step itself when the lesson does not line up.
func (p *lessonPane) shown(s *lab.Step) *lab.Step {
	if p.lesson != nil {
		if ls := p.lesson.Steps(); s.Index < len(ls) && ls[s.Index].Kind == s.Kind {
			return ls[s.Index]
		}
	}
	return s
}

// predictResult shows a predict step that ran: the learner's pick, the
// article's answer and whether they match, in the language shown (the
// step's own observation is in the language the run started in).
func (p *lessonPane) predictResult(s *lab.Step, w int) []string {
	st, t := p.c.st, p.c.t()
	answer, picked, _, _ := steps.Prediction(p.sess.run, s)
	opt := func(o steps.Option) string { return oneLine(o.Name + ": " + o.Text) }
	out := wrapStyled(st.Observed, "  "+fmt.Sprintf(t.Predicted, opt(picked)), w)
	out = append(out, wrapStyled(st.Observed, "  "+fmt.Sprintf(t.ArticleAnswer, opt(answer)), w)...)
	if picked.Name == answer.Name {
		return append(out, wrapStyled(st.Good, "  "+t.PredictMatch, w)...)
	}
	return append(out, wrapStyled(st.Warn, "  "+t.PredictDiffer, w)...)
}

// chosen is the option the run took at choice s, from the step shown.
func (p *lessonPane) chosen(s *lab.Step) (steps.Option, bool) {
	taken := p.sess.run.Choices[s.Attrs["name"]]
	for _, o := range steps.Options(s) {
		if o.Name == taken {
			return o, true
		}
	}
	return steps.Option{}, false
}

// ledgerLine is a ledger step's result in the screen's language: the
// figures it measured and its verdict.
func ledgerLine(t *text, l lab.Ledger, label string) string {
	variant := t.LedgerUnsafe
	if l.Variant == "safe" {
		variant = t.LedgerSafe
	}
	if label != "" {
		variant += " (" + oneLine(label) + ")"
	}
	var figs []string
	for _, f := range []struct {
		name string
		n    int
	}{{"intended", l.Intended}, {"committed", l.Committed}, {"published", l.Published}, {"delivered", l.Delivered},
		{"applied", l.Applied}, {"absorbed", l.Absorbed}, {"waiting", l.Waiting}, {"unavailable", l.Unavailable},
		{"lost", l.Lost}, {"duplicated", l.Twice}} {
		if l.Measured(f.name) {
			figs = append(figs, fmt.Sprintf("%s %d", t.Fields[f.name], f.n))
		}
	}
	v := l.Verdict()
	if s, ok := t.Verdicts[v]; ok {
		v = s
	}
	return variant + ": " + strings.Join(figs, ", ") + " -> " + v
}

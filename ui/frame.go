package ui

// The frame: how the panes are laid out for the terminal, and drawn.

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/worker"
)

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
		lessonH := a.splitLessonH(W, bodyH)
		a.lesson.SetSize(W, lessonH)
		a.panels.SetSize(W, bodyH-lessonH)
	}
	a.list.active = a.focus == focusList
	a.lesson.active = a.focus == focusLesson
}

// splitLessonH is the lesson pane's height in the split layout: a bit
// over half, or, while a menu or the resume offer waits, what it takes to
// read every option whole with two lines of the lesson above (the panels
// keep at least 3 lines).
func (a *App) splitLessonH(W, bodyH int) int {
	// Half on a short terminal (80x24: the panels need their rows, the
	// queues' line and the verdict's), a bit over half on a taller one.
	h := max(bodyH*11/20, 6)
	if bodyH < 30 {
		h = max(bodyH/2, 6)
	}
	if s := a.sess; s != nil && !s.running && (s.pendingChoice() != nil || s.offer > 0) {
		need := len(a.lesson.action(max(W-2, 1))) + 1 + 2 + 2 // action, rule, two lines of text, borders
		h = max(h, min(need, bodyH-3))
	}
	return h
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
	app, lang := st.Header.Render(" "+t.AppName), st.Dim.Render(t.LangLabel+a.c.lang)
	left := app + lang
	right := st.Dim.Render(t.HelpQuit)
	if !a.timerUntil.IsZero() {
		clock := t.TimeUp
		if left := time.Until(a.timerUntil); left > 0 {
			left = left.Round(time.Second)
			clock = fmt.Sprintf(t.TimeLeft, fmt.Sprintf("%d:%02d", int(left.Minutes()), int(left.Seconds())%60))
		}
		right = st.Status.Render(clock) + "  " + right
	}
	if a.banner != "" {
		// The instructor's message takes the header until dismissed; past
		// the width it ends in … (the room's log has it whole).
		left = st.Status.Render(" " + fmt.Sprintf(t.FromInstructor, a.banner))
		right = st.Dim.Render(strings.TrimSpace(t.Dismiss)) + "  " + right
	}
	room := a.width - displayWidth(right)
	if l := a.current(); l != nil && a.banner == "" {
		// The lesson's number is never cut (a cut "lesson 2…" reads as
		// lesson 2): the title gives way first, then the language, then
		// the number goes whole.
		n := t.LessonN
		if l.Part == lab.PartChallenges {
			n = t.ChallengeN
		}
		label := st.Dim.Render(fmt.Sprintf(n, l.Number))
		free := room - 1
		switch {
		case displayWidth(app+lang+label)+4 <= free:
			left = app + lang + label + oneLine(l.Title)
		case displayWidth(app+label)+4 <= free:
			left = app + label + oneLine(l.Title)
		case displayWidth(app+label) <= free:
			left = app + st.Dim.Render(strings.TrimRight(fmt.Sprintf(n, l.Number), ": "))
		default:
			left = app
		}
	}
	if a.banner != "" {
		left = cut(left, max(room-1, 0))
	}
	return fitLine(fitLine(left, max(room-1, 0))+" "+right, a.width)
}

func (a *App) footer() string {
	st := a.c.st
	if a.prompt.open {
		return a.prompt.View(a.width)
	}
	if status := a.statusNow(); status != "" {
		s := st.Status
		if a.statusBad {
			s = st.Bad
		}
		return fitLine(" "+s.Render(status), a.width)
	}
	// As many hints as fit, most useful first.
	hints := a.c.t().HintsList
	if a.focus == focusLesson {
		hints = a.c.t().HintsLesson
		if a.workerPaused() {
			// A paused worker waits for k or c: those keys come right
			// after enter, whatever the width.
			hints = pausedFirst(hints)
		}
		if a.openChallenge() != "" {
			hints = append([]string{a.c.t().HintProgram}, hints...)
		}
	}
	// Those that do not fit are behind ?, and the bar says so: a key cut
	// from the bar is never simply gone.
	hint, more := "", a.c.t().MoreKeys
	for i, h := range hints {
		room := a.width
		if i < len(hints)-1 {
			room -= 2 + displayWidth(more)
		}
		if displayWidth(hint)+2+displayWidth(h) > room {
			hint += "  " + more
			break
		}
		hint += "  " + h
	}
	return fitLine(st.Footer.Render(strings.TrimPrefix(hint, " ")), a.width)
}

// workerPaused reports whether a worker of the lesson is paused at a point.
func (a *App) workerPaused() bool {
	for _, w := range a.panels.workers.statuses {
		if w.State == worker.Paused {
			return true
		}
	}
	return false
}

// pausedFirst is the lesson's hints with k's and c's moved right after the
// first (enter); the others keep their order.
func pausedFirst(hints []string) []string {
	if len(hints) == 0 {
		return hints
	}
	var keys, rest []string
	for _, h := range hints[1:] {
		if strings.HasPrefix(h, "k ") || strings.HasPrefix(h, "c ") {
			keys = append(keys, h)
		} else {
			rest = append(rest, h)
		}
	}
	return append(append([]string{hints[0]}, keys...), rest...)
}

package ui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rmlab/lab/internal/room"
)

// The room's table, drawn: the header, a row per participant (the why
// wrapped below it), the polls, the key line.

func (v *RoomView) render() string {
	if v.watching != "" {
		return v.renderMirror()
	}
	if v.projector {
		return v.renderProjector()
	}
	st, tx := v.st, v.tx()
	var b strings.Builder
	count := map[string]int{}
	for _, p := range v.parts {
		count[p.State()]++
	}
	args := []any{v.room.Name, len(v.parts), len(v.parts) - count["offline"], count["failing"], count["stuck"], count["done"], count["offline"]}
	head := fmt.Sprintf(tx.Header, args...)
	if displayWidth(head) > v.width {
		head = fmt.Sprintf(tx.HeaderShort, args...) // every count kept on a narrow screen
	}
	b.WriteString(cut(st.Header.Render(head), v.width) + "\n")
	if v.err != nil {
		b.WriteString(cut(st.Bad.Render(fmt.Sprintf(tx.CannotRead, v.err)), v.width) + "\n")
	}
	shown := v.shown()
	rows := v.rows()
	// Narrow screens show the lesson by its number (what goto takes), so
	// the failing step and its why keep their room.
	lessonW, lessonOf := 30, v.lessonName
	if v.width < 110 {
		lessonW, lessonOf = 6, v.lessonNumber
	}
	// Columns padded by display width: Chinese is two cells a character.
	row := func(c ...string) string {
		return padRight(c[0], 14) + " " + padRight(c[1], 8) + " " + padRight(c[2], lessonW) + " " + padLeft(c[3], 7) + " " +
			padLeft(c[4], 9) + " " + padLeft(c[5], 4) + "  " + c[6]
	}
	b.WriteString(cut(st.Bold.Render(row(tx.Cols[:]...)), v.width) + "\n")
	entries := make([][]string, len(shown))
	for i, p := range shown {
		entries[i] = v.entry(p, row, lessonOf)
	}
	// The last top that still fills the rows, counted in lines: a
	// participant whose why wraps takes several, and clamping by
	// participants left the end of the list out of reach.
	maxTop, used := len(shown), 0
	for maxTop > 0 && used+len(entries[maxTop-1]) <= rows {
		maxTop--
		used += len(entries[maxTop])
	}
	v.top = min(max(v.top, 0), min(maxTop, max(len(shown)-1, 0)))
	used, last := 0, v.top-1
	for i := v.top; i < len(shown) && used < rows; i++ {
		p, lines := shown[i], entries[i]
		if used > 0 && used+len(lines) > rows {
			break
		}
		for _, l := range lines {
			switch p.State() {
			case "failing", "stuck":
				l = st.Bad.Render(l)
			case "offline", "done":
				l = st.Dim.Render(l)
			}
			b.WriteString(cut(l, v.width) + "\n")
		}
		used += len(lines)
		last = i
	}
	v.pageLen = last - v.top + 1
	switch {
	case len(v.parts) == 0:
		b.WriteString(st.Dim.Render(tx.Nobody) + "\n")
	case len(shown) == 0:
		b.WriteString(st.Dim.Render(fmt.Sprintf(tx.NobodyIs, tx.Filters[v.filter])) + "\n")
	case v.top > 0 || last < len(shown)-1:
		b.WriteString(st.Dim.Render(fmt.Sprintf(tx.Rows, v.top+1, last+1, len(shown), tx.Filters[v.filter])) + "\n")
	}
	if lines := v.pollText(); lines != "" {
		b.WriteString("\n" + st.Bold.Render(tx.Polls) + "\n" + lines)
	}
	b.WriteString("\n")
	switch {
	case v.typing:
		b.WriteString(cut(st.Accent.Render(": "+v.input)+st.Dim.Render("_"+fmt.Sprintf(tx.Typing, room.Grammar)), v.width))
	case v.status != "":
		b.WriteString(cut(st.Status.Render(v.status), v.width))
	default:
		keys := tx.Keys
		if v.width >= 140 {
			keys = fmt.Sprintf(tx.KeysWide, room.Grammar)
		}
		b.WriteString(cut(st.Dim.Render(keys), v.width))
	}
	return b.String()
}

// entry is one participant's lines in the room's table: the columns, and
// what does not fit after them (a failing step's why, the verdicts) on the
// lines below, indented: the why is what the instructor walks over for.
func (v *RoomView) entry(p room.Participant, row func(...string) string, lessonOf func(string) string) []string {
	tx := v.tx()
	on := p.OnStep.Round(time.Second).String()
	switch {
	case p.Done:
		on = tx.Done
	case !p.Online:
		on = fmt.Sprintf(tx.Off, shortAgo(time.Since(p.Updated)))
	}
	info := p.Verdicts
	if p.FailStep != "" {
		info = p.FailStep + ": " + p.FailWhy
	}
	if c := p.ChallengeLine(); c != "" {
		info = strings.TrimSpace(info + "  " + tx.Challenges + " " + c)
	}
	line := row(p.Name, tx.States[p.State()], lessonOf(p.Lesson), fmt.Sprintf("%d/%d", p.Step, p.Steps), on, strconv.Itoa(p.Failed), "")
	lines := []string{line}
	if room := v.width - lipgloss.Width(line); room >= 20 || info == "" {
		wrapped := wrapText(info, max(room, 20))
		lines[0] += wrapped[0]
		for _, w := range wrapped[1:] {
			lines = append(lines, strings.Repeat(" ", lipgloss.Width(line))+w)
		}
	} else {
		for _, w := range wrapText(info, max(v.width-4, 20)) {
			lines = append(lines, "    "+w)
		}
	}
	return lines
}

// shortAgo is a time since, in minutes or hours and minutes ("24m",
// "1h05m"): the column holds it whole.
func shortAgo(d time.Duration) string {
	m := int(d.Round(time.Minute).Minutes())
	if m < 60 {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dh%02dm", m/60, m%60)
}

// cut fits a line to w columns, marking a cut with … so nothing is lost
// silently.
func cut(s string, w int) string {
	if w > 0 && lipgloss.Width(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

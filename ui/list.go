package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
)

// listPane is the lesson list: grouped by part, numbered, marked [x] done,
// [~] in progress (with the step reached), [ ] not started.
type listPane struct {
	c       *common
	w, h    int
	active  bool
	lessons []*lab.Lesson
	cursor  int
	openID  string // the lesson open in the lesson pane
}

func newListPane(c *common) *listPane { return &listPane{c: c} }

func (p *listPane) SetSize(w, h int)       { p.w, p.h = w, h }
func (p *listPane) Update(tea.Msg) tea.Cmd { return nil }

// SetLessons replaces the lessons (a language switch) keeping the cursor on
// the same lesson id.
func (p *listPane) SetLessons(ls []*lab.Lesson) {
	id := p.SelectedID()
	p.lessons = ls
	p.Select(id)
}

// Select puts the cursor on a lesson id, if present.
func (p *listPane) Select(id string) {
	for i, l := range p.lessons {
		if l.ID == id {
			p.cursor = i
			return
		}
	}
	p.cursor = min(p.cursor, max(len(p.lessons)-1, 0))
}

// SelectedID is the lesson under the cursor.
func (p *listPane) SelectedID() string {
	if p.cursor < len(p.lessons) {
		return p.lessons[p.cursor].ID
	}
	return ""
}

// Move moves the cursor.
func (p *listPane) Move(d int) {
	if len(p.lessons) == 0 {
		return
	}
	p.cursor = min(max(p.cursor+d, 0), len(p.lessons)-1)
}

// mark is the ASCII progress mark of a lesson.
func (p *listPane) mark(l *lab.Lesson) string {
	if name, ok := strings.CutPrefix(l.ID, "challenge-"); ok && l.Part == lab.PartChallenges {
		// A challenge is passed or tried, on this screen or by lab challenge run.
		c := p.c.progress.Challenges[name]
		switch {
		case c != nil && c.Passed:
			return "[x]"
		case c != nil && c.Runs > 0:
			return "[~]"
		}
		return "[ ]"
	}
	lp := p.c.progress.Lessons[l.ID]
	switch {
	case lp == nil:
		return "[ ]"
	case lp.Done:
		return "[x]"
	case lp.Step > 0:
		return "[~]"
	}
	return "[ ]"
}

func (p *listPane) View() string {
	st, t := p.c.st, p.c.t()
	iw, ih := p.w-2, p.h-2
	var lines []string
	cursorLine, cursorEnd := 0, 0
	part := lab.Part("")
	for i, l := range p.lessons {
		if l.Part != part {
			part = l.Part
			if len(lines) > 0 {
				lines = append(lines, "")
			}
			for _, l := range wrapText(p.partTitle(part), iw) {
				lines = append(lines, st.Part.Render(l)) // whole, wrapped: a cut heading names nothing
			}
		}
		if i == p.cursor {
			cursorLine = len(lines)
		}
		// The cursor is a mark of its own, not only bold: a plain capture
		// (or a terminal without bold) shows which lesson enter opens.
		cur, open := " ", " "
		if i == p.cursor {
			cur = "*"
		}
		if l.ID == p.openID {
			open = ">"
		}
		open = cur + open
		extra := ""
		if lp := p.c.progress.Lessons[l.ID]; lp != nil && !lp.Done && lp.Step > 0 {
			extra = fmt.Sprintf(t.ListStep, lp.Step, len(l.Steps()))
		}
		if l.ExplainOnly {
			extra += t.ListRead
		}
		// A title wider than the pane wraps under itself: the list is
		// narrow beside the lesson, and a title cut short names nothing.
		prefix := fmt.Sprintf("%s%s %2d ", open, p.mark(l), l.Number)
		pw := displayWidth(prefix)
		body := []string{oneLine(l.Title) + extra}
		if iw-pw >= 8 {
			body = wrapText(oneLine(l.Title)+extra, iw-pw)
		}
		for j, b := range body {
			line := prefix + b
			if j > 0 {
				line = strings.Repeat(" ", pw) + b
			}
			line = fitLine(line, iw)
			if i == p.cursor {
				line = st.Selected.Render(line)
				cursorEnd = len(lines)
			}
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		lines = []string{st.Dim.Render(t.NoLessons)}
	}
	// Keep the cursor's whole entry in view.
	off := 0
	if cursorEnd >= ih {
		off = min(cursorEnd-ih+1, cursorLine)
	}
	if off > 0 {
		lines = lines[off:]
	}
	return pane(st, p.active, t.ListTitle, lines, p.w, p.h)
}

// partTitle names a part the way the article does.
func (p *listPane) partTitle(part lab.Part) string {
	if s, ok := p.c.t().Parts[part]; ok {
		return s
	}
	return string(part)
}

package ui

// The room for a projector (no names) and the watched screen, drawn.

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rmlab/lab/labs"
)

// renderProjector is the room for the wall: how many are on each lesson
// and where in it (a bar per step), and the poll of the lesson most are on;
// no name anywhere.
func (v *RoomView) renderProjector() string {
	st := v.st
	type group struct {
		id         string
		steps      int
		at         map[int]int
		here, done int
		number     int
	}
	groups := map[string]*group{}
	for _, p := range v.parts {
		if !p.Online {
			continue
		}
		g := groups[p.Lesson]
		if g == nil {
			g = &group{id: p.Lesson, at: map[int]int{}, number: 1 << 30}
			if l := labs.Find(v.lessons, p.Lesson); l != nil {
				g.number = l.Number
			}
			groups[p.Lesson] = g
		}
		g.steps = max(g.steps, p.Steps)
		if p.Done {
			g.done++
		} else {
			g.here++
			g.at[p.Step]++
		}
	}
	var gs []*group
	for _, g := range groups {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].number < gs[j].number })
	var b strings.Builder
	tx := v.tx()
	b.WriteString(cut(st.Header.Render(fmt.Sprintf(tx.ProjHeader, v.room.Name)), v.width) + "\n\n")
	bars := []rune("▁▂▃▄▅▆▇█")
	busiest := ""
	most := -1
	for _, g := range gs {
		title := v.lessonName(g.id)
		if l := labs.Find(v.lessons, g.id); l != nil {
			title = fmt.Sprintf("%d %s", l.Number, l.Title)
		}
		b.WriteString(cut(st.Bold.Render(title)+st.Dim.Render(fmt.Sprintf(tx.Working, g.here, g.done)), v.width) + "\n")
		peak := 1
		for _, n := range g.at {
			peak = max(peak, n)
		}
		var line strings.Builder
		for i := 0; i <= g.steps && i < v.width-16; i++ {
			if n := g.at[i]; n > 0 {
				line.WriteRune(bars[min((n*len(bars)-1)/peak, len(bars)-1)])
			} else {
				line.WriteRune('·')
			}
		}
		b.WriteString(cut(fmt.Sprintf(tx.Steps, g.steps, st.Accent.Render(line.String())), v.width) + "\n")
		if g.here+g.done > most {
			busiest, most = g.id, g.here+g.done
		}
	}
	if len(gs) == 0 {
		b.WriteString(st.Dim.Render(tx.NobodyOn) + "\n")
	}
	for _, p := range v.polls {
		if p.Lesson != busiest {
			continue
		}
		b.WriteString("\n" + cut(st.Bold.Render(fmt.Sprintf(tx.Poll, v.lessonName(p.Lesson), p.Name)), v.width) + "\n")
		var opts []string
		for o := range p.Answers {
			opts = append(opts, o)
		}
		sort.Strings(opts)
		for _, o := range opts {
			n := p.Answers[o]
			bar := strings.Repeat("█", n*max(v.width-30, 10)/max(p.Answered, 1))
			mark := ""
			if v.answers && o == v.answer(p.Lesson, p.Name) {
				mark = tx.ArticleMark
			}
			b.WriteString(cut(fmt.Sprintf("  %-12s %s %d%s", o, st.Accent.Render(bar), n, mark), v.width) + "\n")
		}
		b.WriteString(st.Dim.Render(fmt.Sprintf(tx.Answered, p.Answered, p.Reached)) + "\n")
	}
	b.WriteString("\n" + st.Dim.Render(tx.ProjKeys))
	return b.String()
}

// renderMirror is the watched participant's screen, as their server last
// published it, cut to this screen.
func (v *RoomView) renderMirror() string {
	st, tx := v.st, v.tx()
	head := fmt.Sprintf(tx.Watching, v.watching)
	var b strings.Builder
	switch {
	case !v.hasFrame:
		b.WriteString(cut(st.Header.Render(head), v.width) + "\n")
		b.WriteString(cut(st.Dim.Render(fmt.Sprintf(tx.WaitingFor, v.watching)), v.width) + "\n")
	default:
		head += fmt.Sprintf(tx.Drawn, v.frame.Width, v.frame.Height, time.Since(v.frame.At).Round(time.Second))
		b.WriteString(cut(st.Header.Render(head), v.width) + "\n")
		lines := strings.Split(v.frame.Content, "\n")
		for i := 0; i < len(lines) && i < v.height-2; i++ {
			b.WriteString(cut(lines[i], v.width) + "\x1b[m\n")
		}
	}
	b.WriteString(st.Dim.Render(tx.BackToRoom))
	return b.String()
}

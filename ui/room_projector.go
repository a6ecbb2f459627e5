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
	tx := v.tx()
	bars := []rune("▁▂▃▄▅▆▇█")
	busiest := ""
	most := -1
	for _, g := range gs {
		if g.here+g.done > most {
			busiest, most = g.id, g.here+g.done
		}
	}
	// The poll of the lesson most are on, and the keys, always show: the
	// lessons get the lines left, the fullest first, and the rest are
	// counted, never dropped unsaid.
	var poll []string
	for _, p := range v.polls {
		if p.Lesson != busiest {
			continue
		}
		poll = append(poll, "", cut(st.Bold.Render(fmt.Sprintf(tx.Poll, v.lessonName(p.Lesson), p.Name)), v.width))
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
			poll = append(poll, cut(fmt.Sprintf("  %-12s %s %d%s", o, st.Accent.Render(bar), n, mark), v.width))
		}
		poll = append(poll, cut(st.Dim.Render(fmt.Sprintf(tx.Answered, p.Answered, p.Reached)), v.width))
	}
	room := v.height - 2 - len(poll) - 2
	byPeople := append([]*group(nil), gs...)
	sort.SliceStable(byPeople, func(i, j int) bool { return byPeople[i].here+byPeople[i].done > byPeople[j].here+byPeople[j].done })
	shown := map[string]bool{}
	for i, g := range byPeople {
		need := 2
		if i < len(byPeople)-1 {
			need++ // room for the "+N more" line should the next not fit
		}
		if room < need {
			break
		}
		shown[g.id] = true
		room -= 2
	}
	var b strings.Builder
	b.WriteString(cut(st.Header.Render(fmt.Sprintf(tx.ProjHeader, v.room.Name)), v.width) + "\n\n")
	moreLessons, morePeople := 0, 0
	for _, g := range gs {
		if !shown[g.id] {
			moreLessons++
			morePeople += g.here + g.done
			continue
		}
		title := v.lessonName(g.id)
		if l := labs.Find(v.lessons, g.id); l != nil {
			title = fmt.Sprintf("%d %s", l.Number, l.Title)
		}
		// The counts whole, the title cut (with …) if one must give.
		counts := fmt.Sprintf(tx.Working, g.here, g.done)
		b.WriteString(cut(st.Bold.Render(cut(title, max(v.width-displayWidth(counts), 8)))+st.Dim.Render(counts), v.width) + "\n")
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
	}
	if moreLessons > 0 {
		b.WriteString(st.Dim.Render(cut(fmt.Sprintf(tx.MoreLessons, moreLessons, morePeople), v.width)) + "\n")
	}
	if len(gs) == 0 {
		b.WriteString(st.Dim.Render(tx.NobodyOn) + "\n")
	}
	for _, l := range poll {
		b.WriteString(l + "\n")
	}
	b.WriteString("\n" + st.Dim.Render(cut(tx.ProjKeys, v.width)))
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

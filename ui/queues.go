package ui

import (
	"context"
	"fmt"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
)

type queuesTickMsg struct{ gen int }

type queuesDataMsg struct {
	gen   int
	stats []lab.QueueStat
	err   string
}

// queuesPanel shows the lesson's broker queues: ready, unacked, consumers,
// and where the figures came from (the management API knows unacked; a
// passive declare does not, shown as "?").
type queuesPanel struct {
	c      *common
	w, h   int
	active bool
	gen    int
	names  []string
	stats  []lab.QueueStat
	err    string
	read   bool
}

func newQueuesPanel(c *common) *queuesPanel { return &queuesPanel{c: c} }

func (p *queuesPanel) SetSize(w, h int) { p.w, p.h = w, h }

// Restart points the panel at a lesson's queues and polls at once.
func (p *queuesPanel) Restart(l *lab.Lesson) tea.Cmd {
	p.gen++
	p.names, p.stats, p.err, p.read = nil, nil, "", false
	if l != nil {
		p.names = l.Queues
	}
	return p.poll()
}

// Refresh restarts the chain on the same queues.
func (p *queuesPanel) Refresh() tea.Cmd {
	p.gen++
	return p.poll()
}

func (p *queuesPanel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case queuesTickMsg:
		if msg.gen != p.gen {
			return nil
		}
		return p.poll()
	case queuesDataMsg:
		if msg.gen != p.gen {
			return nil
		}
		p.stats, p.err, p.read = msg.stats, msg.err, true
		gen := p.gen
		return tea.Tick(pollEvery, func(time.Time) tea.Msg { return queuesTickMsg{gen} })
	}
	return nil
}

func (p *queuesPanel) available() bool { return p.c.env != nil && p.c.env.Queues != nil }

func (p *queuesPanel) poll() tea.Cmd {
	if len(p.names) == 0 || !p.available() {
		return nil
	}
	gen, names, read := p.gen, append([]string(nil), p.names...), p.c.env.Queues
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
		defer cancel()
		stats, err := read(ctx, names)
		m := queuesDataMsg{gen: gen, stats: stats}
		if err != nil {
			m.err = oneLine(err.Error())
		}
		return m
	}
}

func (p *queuesPanel) View() string {
	st := p.c.st
	var body []string
	switch {
	case len(p.names) == 0:
		body = []string{st.Dim.Render("this lesson uses no broker queues")}
	case !p.available():
		body = []string{st.Warn.Render("queue state unavailable")}
	case !p.read:
		body = []string{st.Dim.Render("reading...")}
	default:
		body = p.render()
	}
	return pane(st, p.active, "Queues", body, p.w, p.h)
}

func (p *queuesPanel) render() []string {
	st := p.c.st
	nameW := len("queue")
	for _, q := range p.stats {
		nameW = max(nameW, displayWidth(oneLine(q.Name)))
	}
	row := func(name, ready, unacked, cons, src string) string {
		return padRight(name, nameW) + "  " + padLeft(ready, 5) + "  " + padLeft(unacked, 7) + "  " +
			padLeft(cons, 9) + "  " + src
	}
	out := []string{st.Dim.Render(row("queue", "ready", "unacked", "consumers", "source"))}
	for _, q := range p.stats {
		if !q.Exists {
			out = append(out, padRight(oneLine(q.Name), nameW)+"  "+st.Dim.Render("not declared yet"))
			continue
		}
		un := "?" // a passive declare cannot count unacked messages
		if q.Unacked >= 0 {
			un = strconv.Itoa(q.Unacked)
		}
		out = append(out, row(oneLine(q.Name), strconv.Itoa(q.Ready), un, strconv.Itoa(q.Consumers), st.Dim.Render(oneLine(q.Source))))
	}
	if p.err != "" {
		out = append(out, st.Warn.Render(fmt.Sprintf("broker: %s", p.err)))
	}
	return out
}

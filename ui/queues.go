package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/steps"
)

type queuesTickMsg struct{ gen int }

type queuesDataMsg struct {
	gen   int
	stats []lab.QueueStat
	err   string
	// handshaking: the broker's handshake outlasted the poll and goes on
	// (broker.ErrHandshaking): no answer yet, not a failure to show.
	handshaking bool
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
	run    *steps.Run // the open lesson's: its own broker nodes, once it starts some
}

func newQueuesPanel(c *common) *queuesPanel { return &queuesPanel{c: c} }

func (p *queuesPanel) SetSize(w, h int) { p.w, p.h = w, h }

// Restart points the panel at a lesson's queues and polls at once.
func (p *queuesPanel) Restart(l *lab.Lesson, run *steps.Run) tea.Cmd {
	p.gen++
	p.run = run
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
		if !msg.handshaking {
			p.stats, p.err, p.read = msg.stats, msg.err, true
		}
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
	if p.run != nil {
		if own := p.run.Queues(); own != nil {
			read = own
		}
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
		defer cancel()
		stats, err := read(ctx, names)
		m := queuesDataMsg{gen: gen, stats: stats}
		switch {
		case errors.Is(err, broker.ErrHandshaking):
			m.handshaking = true
		case err != nil:
			m.err = oneLine(err.Error())
		}
		return m
	}
}

func (p *queuesPanel) View() string {
	st, t := p.c.st, p.c.t()
	var body []string
	switch {
	case len(p.names) == 0:
		body = []string{st.Dim.Render(t.NoQueues)}
	case !p.available():
		body = []string{st.Warn.Render(t.QueuesUnavailable)}
	case !p.read:
		body = []string{st.Dim.Render(t.Reading)}
	default:
		body = p.render()
	}
	return pane(st, p.active, t.Panels[panelQueues], body, p.w, p.h)
}

func (p *queuesPanel) render() []string {
	st, t := p.c.st, p.c.t()
	cols := t.QueueCols
	nameW := displayWidth(cols[0])
	for _, q := range p.stats {
		nameW = max(nameW, displayWidth(oneLine(q.Name)))
	}
	row := func(name, ready, unacked, cons, src string) string {
		return padRight(name, nameW) + "  " + padLeft(ready, max(5, displayWidth(cols[1]))) + "  " +
			padLeft(unacked, max(7, displayWidth(cols[2]))) + "  " + padLeft(cons, max(9, displayWidth(cols[3]))) + "  " + src
	}
	out := []string{st.Dim.Render(row(cols[0], cols[1], cols[2], cols[3], cols[4]))}
	for _, q := range p.stats {
		if !q.Exists {
			out = append(out, padRight(oneLine(q.Name), nameW)+"  "+st.Dim.Render(t.NotDeclared))
			continue
		}
		if q.Down != "" {
			out = append(out, padRight(oneLine(q.Name), nameW)+"  "+st.Warn.Render(t.QueueDown))
			continue
		}
		un := "?" // a passive declare cannot count unacked messages
		if q.Unacked >= 0 {
			un = strconv.Itoa(q.Unacked)
		}
		out = append(out, row(oneLine(q.Name), strconv.Itoa(q.Ready), un, strconv.Itoa(q.Consumers), st.Dim.Render(oneLine(p.source(q.Source)))))
	}
	if p.err != "" {
		out = append(out, st.Warn.Render(fmt.Sprintf(t.BrokerErr, p.err)))
	}
	return out
}

// source says where a queue's figures came from in the screen's language.
func (p *queuesPanel) source(s string) string {
	if v, ok := p.c.t().QueueSources[s]; ok {
		return v
	}
	return s
}

package ui

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/rmlab/lab/internal/worker"
	"github.com/rmlab/lab/steps"
)

type workersTickMsg struct{ gen int }

type workersDataMsg struct {
	gen      int
	statuses []worker.Status
	sessions map[string]bool // nil when a step held the run: keep the last
}

// workersPanel shows the lesson's worker processes (running, paused at a
// point, killed at a point, exited with a code) and the SQL sessions, with a
// blocked statement's wait counted up. ↑/↓ select a worker when this panel
// is active; k and c act on the selection.
type workersPanel struct {
	c        *common
	w, h     int
	active   bool
	gen      int
	run      *steps.Run
	statuses []worker.Status
	sessions map[string]bool
	since    map[string]time.Time // from the session: when a wait began
	selected int
}

func newWorkersPanel(c *common) *workersPanel { return &workersPanel{c: c} }

func (p *workersPanel) SetSize(w, h int) { p.w, p.h = w, h }

// Restart points the panel at a session's run and polls at once.
func (p *workersPanel) Restart(s *session) tea.Cmd {
	p.gen++
	p.run, p.statuses, p.sessions, p.since, p.selected = nil, nil, nil, nil, 0
	if s != nil {
		p.run, p.since = s.run, s.waitSince
	}
	return p.poll()
}

// Refresh restarts the chain on the same run.
func (p *workersPanel) Refresh(s *session) tea.Cmd {
	p.gen++
	if s != nil {
		p.since = s.waitSince
	}
	return p.poll()
}

// SelectedStatus is the selected worker as last polled.
func (p *workersPanel) SelectedStatus() (worker.Status, bool) {
	if p.selected < len(p.statuses) {
		return p.statuses[p.selected], true
	}
	return worker.Status{}, false
}

// Move moves the selection; it reports false when there is nothing to move.
func (p *workersPanel) Move(d int) bool {
	if len(p.statuses) == 0 {
		return false
	}
	p.selected = (p.selected + d + len(p.statuses)) % len(p.statuses)
	return true
}

func (p *workersPanel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case workersTickMsg:
		if msg.gen != p.gen {
			return nil
		}
		return p.poll()
	case workersDataMsg:
		if msg.gen != p.gen {
			return nil
		}
		p.statuses = msg.statuses
		if msg.sessions != nil {
			p.sessions = msg.sessions
		}
		if p.selected >= len(p.statuses) {
			p.selected = max(len(p.statuses)-1, 0)
		}
		gen := p.gen
		return tea.Tick(pollEvery, func(time.Time) tea.Msg { return workersTickMsg{gen} })
	}
	return nil
}

func (p *workersPanel) poll() tea.Cmd {
	if p.run == nil {
		return nil
	}
	gen, run := p.gen, p.run
	return func() tea.Msg {
		// Sessions are guarded inside steps, so a blocked statement shows
		// while later steps run — which is when it matters.
		return workersDataMsg{gen: gen, statuses: run.Workers.Statuses(), sessions: run.Sessions()}
	}
}

func (p *workersPanel) View() string {
	st, t := p.c.st, p.c.t()
	var body []string
	if len(p.statuses) == 0 {
		body = append(body, st.Dim.Render(t.NoWorkers))
	} else {
		row := func(sel, name, kind, pid, state string) string {
			return sel + padRight(name, 10) + " " + padRight(kind, 9) + " " + padLeft(pid, 7) + "  " + state
		}
		body = append(body, st.Dim.Render(row("  ", t.WorkerCols[0], t.WorkerCols[1], t.WorkerCols[2], t.WorkerCols[3])))
		// Rows for workers: the pane less its border, the column titles,
		// the last log line and the sessions. Past that the rows scroll:
		// the selected worker stays in view while the panel is active,
		// else the newest (the one the lesson is talking about).
		n := len(p.statuses)
		from, to := 0, n
		if avail := p.h - 2 - 3; n > avail && avail >= 2 {
			avail-- // a line says which rows show
			from = n - avail
			if p.active {
				from = min(max(p.selected-avail+1, 0), n-avail)
			}
			to = from + avail
		}
		for i := from; i < to; i++ {
			w := p.statuses[i]
			sel := "  "
			if i == p.selected && p.active {
				sel = "> "
			}
			pid := "-"
			if w.PID > 0 {
				pid = strconv.Itoa(w.PID)
			}
			line := row(sel, oneLine(w.Name), oneLine(w.Kind), pid, p.state(w))
			if i == p.selected && p.active {
				line = st.Selected.Render(line)
			}
			body = append(body, line)
		}
		if from > 0 || to < n {
			body = append(body, st.Dim.Render(fmt.Sprintf(t.WorkersShown, from+1, to, n)))
		}
		if w := p.statuses[min(p.selected, len(p.statuses)-1)]; len(w.Log) > 0 {
			body = append(body, st.Dim.Render(oneLine(w.Name)+": "+oneLine(w.Log[len(w.Log)-1])))
		}
	}
	body = append(body, p.sessionLine())
	return pane(st, p.active, t.Panels[panelWorkers], body, p.w, p.h)
}

func (p *workersPanel) state(w worker.Status) string {
	st, t := p.c.st, p.c.t()
	switch w.State {
	case worker.Paused:
		return st.Warn.Render(fmt.Sprintf(t.PausedAt, oneLine(w.Point)))
	case worker.Killed:
		return st.Bad.Render(fmt.Sprintf(t.KilledAt, oneLine(w.Point)))
	case worker.Exited:
		if w.ExitCode != 0 {
			return st.Bad.Render(fmt.Sprintf(t.ExitedN, w.ExitCode))
		}
		return st.Dim.Render(fmt.Sprintf(t.ExitedN, 0))
	default:
		s := t.States[worker.Running]
		if w.Point != "" {
			s += " (" + oneLine(w.Point) + ")"
		}
		return st.Good.Render(s)
	}
}

// sessionLine lists SQL sessions; a blocked one shows how long it waits.
func (p *workersPanel) sessionLine() string {
	st, t := p.c.st, p.c.t()
	if len(p.sessions) == 0 {
		return st.Dim.Render(t.NoSessions)
	}
	names := make([]string, 0, len(p.sessions))
	for n := range p.sessions {
		names = append(names, n)
	}
	sort.Strings(names)
	s := st.Dim.Render(t.SQLSessions)
	for _, n := range names {
		if p.sessions[n] {
			w := t.Waiting
			if t, ok := p.since[n]; ok {
				w += " " + p.c.now().Sub(t).Round(100*time.Millisecond).String()
			}
			s += " " + n + " " + st.Warn.Render(w)
		} else {
			s += " " + n + " " + st.Dim.Render(t.Idle)
		}
	}
	return s
}

package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/guptarohit/asciigraph"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/steps"
)

type chaosTickMsg struct{ gen int }

type chaosDataMsg struct {
	gen      int
	running  bool
	pipeline string
	seed     uint64
	duration time.Duration
	timeline chaos.Timeline
	done     []*chaos.Summary
}

// chaosPanel takes the tables' place in a lesson that runs the pipeline
// under a fault schedule (a chaos step): orders committed, published and
// applied per second as a chart, the latest faults with what they found,
// and each finished run's lost / twice / absorbed.
type chaosPanel struct {
	c      *common
	w, h   int
	active bool
	gen    int
	run    *steps.Run
	data   chaosDataMsg
}

func newChaosPanel(c *common) *chaosPanel { return &chaosPanel{c: c} }

// hasChaos reports whether a lesson runs a chaos step: its tables slot
// shows this panel.
func hasChaos(l *lab.Lesson) bool {
	if l == nil {
		return false
	}
	for _, s := range l.Steps() {
		if s.Kind == "chaos" || s.Kind == "challenge" {
			return true
		}
	}
	return false
}

func (p *chaosPanel) SetSize(w, h int) { p.w, p.h = w, h }

// Restart points the panel at a session's run and polls at once.
func (p *chaosPanel) Restart(run *steps.Run) tea.Cmd {
	p.gen++
	p.run, p.data = run, chaosDataMsg{}
	return p.poll()
}

func (p *chaosPanel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case chaosTickMsg:
		if msg.gen != p.gen {
			return nil
		}
		return p.poll()
	case chaosDataMsg:
		if msg.gen != p.gen {
			return nil
		}
		p.data = msg
		gen := p.gen
		return tea.Tick(pollEvery, func(time.Time) tea.Msg { return chaosTickMsg{gen} })
	}
	return nil
}

// poll reads the run's chaos state: memory only (the history's counts),
// no service is asked.
func (p *chaosPanel) poll() tea.Cmd {
	if p.run == nil {
		return nil
	}
	gen, run := p.gen, p.run
	return func() tea.Msg {
		m := chaosDataMsg{gen: gen}
		live := run.Chaos()
		if live == nil {
			return m
		}
		cur, done := live.Now()
		m.done = done
		if cur != nil {
			m.running, m.pipeline, m.seed, m.duration = true, cur.O.Pipeline.Name, cur.O.Seed, cur.O.Duration
			m.timeline = cur.Hist.Timeline()
		} else if len(done) > 0 {
			last := done[len(done)-1]
			m.pipeline, m.seed, m.timeline = last.Pipeline, last.Seed, last.Timeline
		}
		return m
	}
}

func (p *chaosPanel) View() string {
	st, t := p.c.st, p.c.t()
	d := p.data
	var body []string
	iw, ih := max(p.w-2, 1), max(p.h-2, 1)
	if d.pipeline == "" {
		body = []string{st.Dim.Render(t.ChaosIdle)}
		return pane(st, p.active, t.ChaosTitle, body, p.w, p.h)
	}
	phase := d.timeline.Phase
	if !d.running {
		phase = "done"
	}
	body = append(body, fmt.Sprintf(t.ChaosHead, d.pipeline, d.seed, t.ChaosPhases[phase]))
	// What is left under the chart: the legend, the totals, three faults,
	// one line per run.
	nf := len(d.timeline.Faults)
	faultLines := min(nf, 3)
	if nf > 3 {
		faultLines++ // the "+N earlier" line
	}
	// Lines for the chart, its legend and the totals.
	room := ih - 1 - faultLines - len(d.done)
	if len(d.timeline.Seconds) > 0 {
		var tot chaos.Bucket
		for _, b := range d.timeline.Seconds {
			tot.Committed += b.Committed
			tot.Published += b.Published
			tot.Applied += b.Applied
			tot.Absorbed += b.Absorbed
		}
		totals := fmt.Sprintf(t.ChaosTotals, tot.Committed, tot.Published, tot.Applied, tot.Absorbed)
		switch {
		case room >= 5: // a chart of three lines at least
			body = append(body, chartLines(d.timeline, iw, room-2)...)
			body = append(body, st.Dim.Render(t.ChaosLegend), totals)
		case room >= 2:
			// Said, not dropped: how much taller the chart needs the pane.
			body = append(body, st.Dim.Render(fmt.Sprintf(t.ChaosNoChart, 5-room)), totals)
		case room == 1:
			body = append(body, st.Dim.Render(fmt.Sprintf(t.ChaosNoChart, 5-room)))
		}
	}
	faults := d.timeline.Faults
	if len(faults) > 3 {
		// Said, not dropped: the chaos step's output lists every fault.
		body = append(body, st.Dim.Render(fmt.Sprintf(t.ChaosEarlier, len(faults)-3)))
	}
	for _, f := range faults[max(0, len(faults)-3):] {
		what := string(f.Kind) + " " + f.Target
		if f.Point != "" {
			what += " @" + f.Point
		}
		res := f.Result
		if res == "" {
			res = "..."
		}
		body = append(body, st.Warn.Render(fmt.Sprintf("%5.1fs ", float64(f.T)/1000)+oneLine(what))+st.Dim.Render(": "+oneLine(res)))
	}
	for _, s := range d.done {
		line := fmt.Sprintf(t.ChaosResult, s.Pipeline, s.Committed, s.Lost, s.Twice, s.Absorbed)
		if s.OK() {
			body = append(body, st.Good.Render(line))
		} else {
			body = append(body, st.Bad.Render(line))
		}
	}
	return pane(st, p.active, t.ChaosTitle, body, p.w, p.h)
}

// chartLines draws committed, published and applied per second with
// asciigraph, the newest seconds that fit the width.
func chartLines(tl chaos.Timeline, w, h int) []string {
	secs := tl.Seconds
	// The y labels take about 6 cells; each second gets at least 2.
	if keep := max((w-8)/2, 4); len(secs) > keep {
		secs = secs[len(secs)-keep:]
	}
	// Two lines: what the producer committed and what the consumers
	// applied; the gap between them is the pipeline falling behind (the
	// header counts what was published).
	series := make([][]float64, 2)
	for _, b := range secs {
		series[0] = append(series[0], float64(b.Committed))
		series[1] = append(series[1], float64(b.Applied))
	}
	if len(secs) == 1 { // asciigraph needs two points for a line
		for i := range series {
			series[i] = append(series[i], series[i][0])
		}
	}
	plot := asciigraph.PlotMany(series, asciigraph.Height(h-1), asciigraph.Width(max(w-8, 8)), asciigraph.LowerBound(0),
		asciigraph.Precision(0), asciigraph.SeriesChars(asciigraph.CreateCharSet("."), asciigraph.DefaultCharSet))
	return strings.Split(plot, "\n")
}

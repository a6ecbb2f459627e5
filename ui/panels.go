package ui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	lab "github.com/rmlab/lab"
)

// Panel indexes, in tab order.
const (
	panelTables = iota
	panelQueues
	panelWorkers
	panelLedger
	panelCount
)

// panelSet holds the four live panels and lays them out: stacked when the
// column is tall enough, else folded into tabs (tab/shift-tab cycle). In
// both forms one panel is active: it gets the accent border and, for the
// worker panel, the up/down keys.
type panelSet struct {
	c          *common
	w, h       int
	stacked    bool
	active     int
	tables     *tablesPanel
	chaos      *chaosPanel // in the tables' place when the lesson runs a chaos step
	showsChaos bool
	queues     *queuesPanel
	workers    *workersPanel
	ledger     *ledgerPanel
}

func newPanelSet(c *common) *panelSet {
	return &panelSet{c: c, tables: newTablesPanel(c), chaos: newChaosPanel(c), queues: newQueuesPanel(c),
		workers: newWorkersPanel(c), ledger: newLedgerPanel(c)}
}

func (p *panelSet) items() [panelCount]Component {
	if p.showsChaos {
		return [panelCount]Component{p.chaos, p.queues, p.workers, p.ledger}
	}
	return [panelCount]Component{p.tables, p.queues, p.workers, p.ledger}
}

// stackMinHeight is the column height below which panels fold into tabs.
const stackMinHeight = 36

func (p *panelSet) SetSize(w, h int) {
	p.w, p.h = w, h
	p.stacked = h >= stackMinHeight
	if !p.stacked {
		for _, c := range p.items() {
			c.SetSize(w, h-1) // the tab bar takes a line
		}
		p.tables.SetSize(w, h-1)
		p.chaos.SetSize(w, h-1)
		return
	}
	// Fixed heights for the small panels; the tables get the rest.
	ledgerH, workersH, queuesH := 13, 8, 7
	if len(p.queues.names) == 0 {
		queuesH = 3 // one line: "this lesson uses no broker queues"
	}
	p.ledger.SetSize(w, ledgerH)
	p.workers.SetSize(w, workersH)
	p.queues.SetSize(w, queuesH)
	p.tables.SetSize(w, h-ledgerH-workersH-queuesH)
	p.chaos.SetSize(w, h-ledgerH-workersH-queuesH)
}

// Cycle moves the active panel by d.
func (p *panelSet) Cycle(d int) {
	p.active = (p.active + d + panelCount) % panelCount
	p.markActive()
}

func (p *panelSet) markActive() {
	p.tables.active = p.active == panelTables
	p.chaos.active = p.active == panelTables
	p.queues.active = p.active == panelQueues
	p.workers.active = p.active == panelWorkers
	p.ledger.active = p.active == panelLedger
}

// Update routes panel messages; each panel ignores the others' types.
func (p *panelSet) Update(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, c := range p.items() {
		if cmd := c.Update(msg); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return tea.Batch(cmds...)
}

func (p *panelSet) View() string {
	items := p.items()
	if p.stacked {
		views := make([]string, 0, panelCount)
		for _, c := range items {
			views = append(views, c.View())
		}
		return strings.Join(views, "\n") // every panel is exactly p.w wide
	}
	// Folded, the panels not shown still say what matters, a line each
	// under the one shown: the queues' counts and the ledger's verdict
	// (at 80x24 a learner sees the step's rows, the queues and the verdict
	// at once).
	glance := p.glance()
	items[p.active].SetSize(p.w, max(p.h-1-len(glance), 3))
	out := p.tabBar() + "\n" + items[p.active].View()
	for _, g := range glance {
		out += "\n" + g
	}
	return out
}

// lessonOpened makes the first panel the lesson has something for the
// active one: a lesson with no tables opens on its queues.
func (p *panelSet) lessonOpened(l *lab.Lesson) {
	if l != nil && len(l.Tables) == 0 && !p.showsChaos && len(l.Queues) > 0 && p.active == panelTables {
		p.active = panelQueues
		p.markActive()
	}
}

// glance is the folded layout's lines for the queues and the verdict,
// when their panels are not the one shown.
func (p *panelSet) glance() []string {
	var out []string
	if p.active != panelQueues {
		if q := p.queues.glance(p.w); q != "" {
			out = append(out, q)
		}
	}
	if p.active != panelLedger {
		if l := p.ledger.glance(p.w); l != "" {
			out = append(out, l)
		}
	}
	if len(out) > max(p.h-1-3, 0) {
		out = out[:max(p.h-1-3, 0)]
	}
	return out
}

// glance is one line of every queue's counts; what does not fit is
// counted, never cut silently.
func (p *queuesPanel) glance(w int) string {
	st, t := p.c.st, p.c.t()
	if len(p.names) == 0 {
		return ""
	}
	head := st.Bold.Render(t.Panels[panelQueues] + ": ")
	switch {
	case !p.available():
		return fitLine(head+st.Warn.Render(t.QueuesUnavailable), w)
	case !p.read:
		return fitLine(head+st.Dim.Render(t.Reading), w)
	case p.err != "":
		return fitLine(head+st.Warn.Render(fmt.Sprintf(t.BrokerErr, p.err)), w)
	}
	var parts []string
	for _, q := range p.stats {
		switch {
		case !q.Exists:
			parts = append(parts, oneLine(q.Name)+" "+t.NotDeclared)
		case q.Down != "":
			parts = append(parts, oneLine(q.Name)+" "+t.QueueDown)
		default:
			un := "?"
			if q.Unacked >= 0 {
				un = strconv.Itoa(q.Unacked)
			}
			parts = append(parts, fmt.Sprintf(t.QueueGlance, oneLine(q.Name), q.Ready, un))
		}
	}
	line := head
	for i, part := range parts {
		sep := ""
		if i > 0 {
			sep = " | "
		}
		more := ""
		if i < len(parts)-1 {
			more = fmt.Sprintf(t.GlanceMore, len(parts)-i-1)
		}
		if displayWidth(line+sep+part+more) > w && i > 0 {
			return fitLine(line+st.Dim.Render(fmt.Sprintf(t.GlanceMore, len(parts)-i)), w)
		}
		line += sep + part
	}
	return fitLine(line, w)
}

// glance is the latest verdict of each variant on one line ("" before
// any ledger).
func (p *ledgerPanel) glance(w int) string {
	st, t := p.c.st, p.c.t()
	unsafe, _ := p.latest("unsafe")
	safe, _ := p.latest("safe")
	if unsafe == nil && safe == nil {
		return ""
	}
	v := func(label string, l *lab.Ledger) string {
		if l == nil {
			return label + " -"
		}
		shown := l.Verdict()
		if s, ok := t.Verdicts[shown]; ok {
			shown = s
		}
		if l.Verdict() == "applied once" {
			return label + " " + st.VerdictOK.Render(shown)
		}
		return label + " " + st.VerdictBad.Render(shown)
	}
	return fitLine(st.Bold.Render(t.Panels[panelLedger]+": ")+v(t.LedgerUnsafe, unsafe)+" | "+v(t.LedgerSafe, safe), w)
}

// tabBar is "[Tables] Queues Workers Ledger  (tab)" in plain ASCII.
func (p *panelSet) tabBar() string {
	st, t := p.c.st, p.c.t()
	var b strings.Builder
	for i, n := range t.Panels {
		if i == panelTables && p.showsChaos {
			n = t.ChaosTitle
		}
		if i > 0 {
			b.WriteString(" ")
		}
		if i == p.active {
			b.WriteString(st.TabOn.Render("[" + n + "]"))
		} else {
			b.WriteString(st.TabOff.Render(" " + n + " "))
		}
	}
	b.WriteString(st.Dim.Render(t.TabNext))
	return fitLine(b.String(), p.w)
}

package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
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
	return p.tabBar() + "\n" + items[p.active].View()
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

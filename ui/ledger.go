package ui

import (
	"fmt"
	"strconv"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
)

// ledgerPanel shows the outcome ledger: what the unsafe and the safe
// variant intended and what happened, side by side, verdicts highlighted.
// It needs no tick: ledgers only change when a ledger step returns, and the
// App hands them over then (from the step results, never by reading the
// Run while a step may be appending to it).
type ledgerPanel struct {
	c       *common
	w, h    int
	active  bool
	ledgers []lab.Ledger
}

func newLedgerPanel(c *common) *ledgerPanel { return &ledgerPanel{c: c} }

func (p *ledgerPanel) SetSize(w, h int)         { p.w, p.h = w, h }
func (p *ledgerPanel) Update(tea.Msg) tea.Cmd   { return nil }
func (p *ledgerPanel) Set(ledgers []lab.Ledger) { p.ledgers = ledgers }

// latest returns the last ledger of a variant and how many came before it.
func (p *ledgerPanel) latest(variant string) (*lab.Ledger, int) {
	var last *lab.Ledger
	n := 0
	for i := range p.ledgers {
		if p.ledgers[i].Variant == variant {
			last = &p.ledgers[i]
			n++
		}
	}
	return last, max(n-1, 0)
}

// zero is true for a missing ledger or a 0 figure.
func zero(l *lab.Ledger, f func(lab.Ledger) int) bool { return l == nil || f(*l) == 0 }

func (p *ledgerPanel) View() string {
	st, t := p.c.st, p.c.t()
	title := t.Panels[panelLedger]
	unsafe, nu := p.latest("unsafe")
	safe, ns := p.latest("safe")
	if unsafe == nil && safe == nil {
		return pane(st, p.active, title, []string{st.Dim.Render(t.NoLedger)}, p.w, p.h)
	}
	iw := p.w - 2
	labelW := 11
	for _, f := range t.Fields {
		labelW = max(labelW, displayWidth(f))
	}
	colW := max((iw-labelW-4)/2, 8)
	cell := func(s string) string { return fitLine(s, colW) }
	num := func(l *lab.Ledger, name string, f func(lab.Ledger) int) string {
		if l == nil || !l.Measured(name) {
			return "-" // not measured: never a 0 the lesson did not count
		}
		return strconv.Itoa(f(*l))
	}
	measured := func(name string) bool {
		return (unsafe != nil && unsafe.Measured(name)) || (safe != nil && safe.Measured(name))
	}
	row := func(label, a, b string) string {
		return padRight(label, labelW) + " " + cell(a) + "  " + cell(b)
	}
	body := []string{st.Bold.Render(row("", t.LedgerUnsafe, t.LedgerSafe))}
	verdict := func(l *lab.Ledger) string {
		if l == nil {
			return cell("-")
		}
		v := l.Verdict()
		shown := v
		if s, ok := t.Verdicts[v]; ok {
			shown = s
		}
		if v == "applied once" {
			return st.VerdictOK.Render(cell(shown))
		}
		return st.VerdictBad.Render(cell(shown))
	}
	// The verdict comes first so a short pane never hides it.
	body = append(body, padRight(t.LedgerVerdict, labelW)+" "+verdict(unsafe)+"  "+verdict(safe))
	labels := func(l *lab.Ledger, earlier int) string {
		if l == nil {
			return t.NotRunYet
		}
		s := oneLine(l.Label)
		if earlier > 0 {
			s = fmt.Sprintf(t.Earlier, earlier, s)
		}
		return s
	}
	body = append(body, st.Dim.Render(row("", labels(unsafe, nu), labels(safe, ns))))
	fields := []struct {
		name string
		f    func(lab.Ledger) int
	}{
		{"intended", func(l lab.Ledger) int { return l.Intended }},
		{"committed", func(l lab.Ledger) int { return l.Committed }},
		{"published", func(l lab.Ledger) int { return l.Published }},
		{"delivered", func(l lab.Ledger) int { return l.Delivered }},
		{"applied", func(l lab.Ledger) int { return l.Applied }},
		{"absorbed", func(l lab.Ledger) int { return l.Absorbed }},
		{"waiting", func(l lab.Ledger) int { return l.Waiting }},
		{"unavailable", func(l lab.Ledger) int { return l.Unavailable }},
		{"lost", func(l lab.Ledger) int { return l.Lost }},
		{"duplicated", func(l lab.Ledger) int { return l.Twice }},
	}
	// A short pane (80x24 folds the panels into 7 lines) keeps the figures
	// that matter: optional counts that are 0 on both sides go first, then
	// the label line.
	room := p.h - 2
	var rows []struct {
		name string
		f    func(lab.Ledger) int
	}
	for _, f := range fields {
		if measured(f.name) {
			rows = append(rows, f)
		}
	}
	if 3+len(rows) > room {
		optional := map[string]bool{"committed": true, "published": true, "delivered": true, "absorbed": true, "waiting": true, "unavailable": true}
		all := rows
		rows = rows[:0:0]
		for _, f := range all {
			if !(optional[f.name] && zero(unsafe, f.f) && zero(safe, f.f)) {
				rows = append(rows, f)
			}
		}
	}
	if 3+len(rows) > room {
		body = body[:2] // no room for the label line
	}
	for _, f := range rows {
		body = append(body, row(t.Fields[f.name], num(unsafe, f.name, f.f), num(safe, f.name, f.f)))
	}
	return pane(st, p.active, title, body, p.w, p.h)
}

package ui

import (
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// helpOverlay lists every key of the keymap; any key closes it.
type helpOverlay struct {
	c    *common
	w, h int
}

func newHelpOverlay(c *common) *helpOverlay { return &helpOverlay{c: c} }

func (p *helpOverlay) SetSize(w, h int)       { p.w, p.h = w, h }
func (p *helpOverlay) Update(tea.Msg) tea.Cmd { return nil }

func (p *helpOverlay) View() string {
	st := p.c.st
	keyW := 0
	all := p.c.keys.All()
	for _, b := range all {
		keyW = max(keyW, displayWidth(b.Help().Key))
	}
	lines := []string{""}
	for _, b := range all {
		h := b.Help()
		lines = append(lines, " "+st.Key.Render(padRight(h.Key, keyW))+"  "+h.Desc)
	}
	t := p.c.t()
	lines = append(lines, "", st.Dim.Render(t.HelpMarks), st.Dim.Render(t.HelpTables), st.Dim.Render(t.HelpClose))
	w := 4
	for _, l := range lines {
		w = max(w, displayWidth(l)+3)
	}
	w = min(w, p.w)
	h := min(len(lines)+2, p.h)
	box := pane(st, true, t.HelpTitle, lines, w, h)
	return lipgloss.Place(p.w, p.h, lipgloss.Center, lipgloss.Center, box)
}

package ui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the screen answers, in one place: the help overlay and
// the footer are drawn from it, so a key cannot exist without being listed.
// Help texts use ASCII only (arrows are East-Asian-ambiguous glyphs).
type KeyMap struct {
	Up       key.Binding
	Down     key.Binding
	Enter    key.Binding
	Esc      key.Binding
	Tab      key.Binding
	ShiftTab key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
	Kill     key.Binding
	Continue key.Binding
	Reset    key.Binding
	ResetAll key.Binding
	Lang     key.Binding
	Help     key.Binding
	Quit     key.Binding
	Yes      key.Binding // confirms R
}

// DefaultKeyMap is the lab's keymap.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:       key.NewBinding(key.WithKeys("up"), key.WithHelp("up", "select: lesson, option, worker; else scroll")),
		Down:     key.NewBinding(key.WithKeys("down"), key.WithHelp("down", "select: lesson, option, worker; else scroll")),
		Enter:    key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open the lesson / run the next step / take the option")),
		Esc:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the lesson list (closes help)")),
		Tab:      key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next panel (tables, queues, workers, ledger)")),
		ShiftTab: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous panel")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "scroll the lesson up a page")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "space"), key.WithHelp("pgdn/space", "scroll the lesson down a page")),
		Top:      key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "lesson top")),
		Bottom:   key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "lesson bottom")),
		Kill:     key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "kill the selected worker now (SIGKILL)")),
		Continue: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "let the selected paused worker go on")),
		Reset:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reset this lesson (new run, runs its reset step)")),
		ResetAll: key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "reset all progress (asks first)")),
		Lang:     key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "switch language en/zh, same place")),
		Help:     key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "this help")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q/ctrl+c", "quit (kills every worker)")),
		Yes:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "confirm a reset of everything")),
	}
}

// All lists every binding in help order.
func (k KeyMap) All() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Enter, k.Esc, k.Tab, k.ShiftTab, k.PageUp, k.PageDown,
		k.Top, k.Bottom, k.Kill, k.Continue, k.Reset, k.ResetAll, k.Lang, k.Help, k.Quit, k.Yes}
}

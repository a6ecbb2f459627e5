package ui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the screen answers, in one place: the help overlay and
// the footer are drawn from it, so a key cannot exist without being listed.
// Help texts are in text_i18n.go; no arrows (East-Asian-ambiguous glyphs).
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
	Dismiss  key.Binding // the instructor's message
	Program  key.Binding // a challenge: the command that runs the learner's program
	Short    key.Binding // short waits for this run (before its first step)
}

// DefaultKeyMap is the lab's keymap, described in English.
func DefaultKeyMap() KeyMap { return keyMapFor("en") }

// keyMapFor is the keymap with its help in lang (text_i18n.go): the keys
// are the same in every language.
func keyMapFor(lang string) KeyMap {
	t := textFor(lang)
	b := func(help string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, t.Keys[help]))
	}
	return KeyMap{
		Up:       b("up", "up"),
		Down:     b("down", "down"),
		Enter:    b("enter", "enter"),
		Esc:      b("esc", "esc"),
		Tab:      b("tab", "tab"),
		ShiftTab: b("shift+tab", "shift+tab"),
		PageUp:   b("pgup", "pgup"),
		PageDown: b("pgdn/space", "pgdown", "space"),
		Top:      b("home", "home"),
		Bottom:   b("end", "end"),
		Kill:     b("k", "k"),
		Continue: b("c", "c"),
		Reset:    b("r", "r"),
		ResetAll: b("R", "R"),
		Lang:     b("l", "l"),
		Help:     b("?", "?"),
		Quit:     b("q/ctrl+c", "q", "ctrl+c"),
		Yes:      b("y", "y"),
		Dismiss:  b("x", "x"),
		Program:  b("p", "p"),
		Short:    b("w", "w"),
	}
}

// All lists every binding in help order.
func (k KeyMap) All() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Enter, k.Esc, k.Tab, k.ShiftTab, k.PageUp, k.PageDown,
		k.Top, k.Bottom, k.Kill, k.Continue, k.Reset, k.ResetAll, k.Lang, k.Help, k.Quit, k.Yes, k.Dismiss, k.Program, k.Short}
}

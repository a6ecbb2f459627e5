// Package plain makes text that came from outside the lab (a learner's
// program, a table, a message, a participant) safe to show: one line of
// plain text, with every escape sequence and control character removed,
// so it cannot drive the terminal that shows it.
package plain

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Line is s as one line of plain text of at most max bytes, cut on a
// character boundary: every escape sequence (colours, OSC 8 links, cursor
// moves) and control character (C0, C1, format characters but the
// zero-width joiner) removed, runs of spaces, tabs and line breaks made
// one space. A cut inside a character made MySQL refuse the line (1366).
func Line(s string, max int) string {
	s = ansi.Strip(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			r = ' '
		case r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) && r != '\u200d':
			continue
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

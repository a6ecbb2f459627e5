// Package plain makes text that came from outside the lab (a learner's
// program, a table, a message, a participant) safe to show: one line of
// plain text, with every escape sequence and control character removed,
// so it cannot drive the terminal that shows it.
package plain

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Text is s as one line of plain text, its spaces kept as they are: every
// escape sequence and control character removed, line breaks and tabs made
// spaces. For a table cell or a program's line, whose columns may line up.
func Text(s string) string {
	if clean(s) {
		return s
	}
	s = ansi.Strip(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			r = ' '
		case bad(r):
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CSV is s as a CSV cell a spreadsheet shows as text: plain (Line), and a
// cell that would start a formula (=, +, -, @) starts with ' instead.
func CSV(s string) string {
	s = Line(s, 4096)
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}

// clean reports whether s is printable ASCII: nothing to remove (the fast
// path, most of what a screen shows).
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// bad is a rune no terminal should get from outside the code: invalid
// UTF-8, C0 and C1 controls, format characters (bidi overrides and
// isolates among them) but the zero-width joiner.
func bad(r rune) bool {
	return r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) && r != '\u200d'
}

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
		case bad(r):
			continue
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// Cut is s in at most max bytes, cut on a character and ending in "…"
// when it was cut: text is never shortened without saying so.
func Cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	end := max - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

// JSON is b, a JSON document, with every character Text would remove
// written as a \u escape instead: the data is whole for a program that
// reads it, and a terminal that shows it gets no C1 control (U+009B acts
// as CSI on some) and no bidi override. Outside strings JSON holds only
// ASCII, and json.Marshal already escapes C0 controls in strings.
func JSON(b []byte) []byte {
	if cleanLines(string(b)) {
		return b
	}
	var out strings.Builder
	for _, r := range string(b) {
		// U+FFFD too (json.Marshal's stand-in for invalid UTF-8): escaped,
		// it survives a Writer, which drops it from plain text.
		if r >= 0x7f && bad(r) {
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&out, `\u%04x`, u)
			}
			continue
		}
		out.WriteRune(r)
	}
	return []byte(out.String())
}

// sgr is one Select Graphic Rendition sequence: colours and weights, which
// move nothing and send nothing.
var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// Screen is s, a screen the lab drew and kept (a frame a server
// published), with only its line breaks and colours (SGR) left: no
// cursor move, clear, link, title, clipboard or any other control, where
// a frame anyone could write came from.
func Screen(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		styles := sgr.FindAllString(l, -1)
		parts := sgr.Split(l, -1)
		var b strings.Builder
		for j, p := range parts {
			b.WriteString(Text(p))
			if j < len(styles) {
				b.WriteString(styles[j])
			}
		}
		lines[i] = b.String()
	}
	return strings.Join(lines, "\n")
}

package plain

import (
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Lines is s as plain text whose lines and tabs stay: every escape
// sequence and control character removed as Text removes them, carriage
// returns too (one could overwrite the line before it). For text many
// lines long: a failure's detail, a log, a report's body.
func Lines(s string) string {
	if cleanLines(s) {
		return s
	}
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		// Line by line: an escape left open at a line's end would take the
		// next line's first character as its final byte.
		for _, r := range ansi.Strip(l) {
			if r != '\t' && (r == '\r' || bad(r)) {
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cleanLines is clean with line breaks and tabs allowed (the fast path:
// nearly every line the lab prints).
func cleanLines(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// Writer is w behind Lines: whatever is written reaches w as plain text,
// its lines and tabs kept. The lab's own output holds no escape, so its
// stdout and stderr go through one: an outside string a message quotes
// (a row, a queue name, a server's log, a program's status) cannot drive
// the terminal, whichever path brought it. A character split between two
// writes is kept whole; an escape sequence split between two loses its
// escape and shows as text.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct {
	mu    sync.Mutex
	w     io.Writer
	carry []byte // the start of a character the last write cut
}

func (p *writer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	buf := append(p.carry, b...)
	p.carry = nil
	// Keep back the start of a character the write cut (at most 3 bytes).
	cut := len(buf)
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	p.carry = append([]byte(nil), buf[cut:]...)
	if _, err := io.WriteString(p.w, Lines(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(b), nil
}

package ui

import (
	"strings"
	"sync"
	"unicode"

	"charm.land/glamour/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// proseCache renders Markdown prose with glamour once per block, width and
// style: rendering is the costliest thing the screen does, and it happens in
// Update (a step, a resize, a language switch), never per frame.
type proseCache struct {
	width int
	style string
	r     *glamour.TermRenderer
	m     map[string][]string
}

// lines returns md rendered to at most width cells per line.
func (c *proseCache) lines(key, md string, width int, st *Styles) []string {
	if width < 1 {
		width = 1
	}
	if c.r == nil || c.width != width || c.style != st.GlamourName {
		r, err := glamour.NewTermRenderer(glamour.WithStyles(st.Glamour), glamour.WithWordWrap(width))
		if err != nil {
			r = nil
		}
		c.r, c.width, c.style, c.m = r, width, st.GlamourName, map[string][]string{}
	}
	if v, ok := c.m[key]; ok {
		return v
	}
	// Every screen of a workshop server renders the same lessons at the
	// same few widths: one rendering serves them all.
	sk := sharedKey{style: st.GlamourName, width: width, md: md}
	if v, ok := sharedProse.Load(sk); ok {
		c.m[key] = v.([]string)
		return c.m[key]
	}
	src := reflow(joinCJKLines(asciiSafe(md)))
	var out string
	if c.r != nil {
		if s, err := c.r.Render(src); err == nil {
			out = s
		}
	}
	if out == "" {
		out = src
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		// glamour wraps CJK by cell width already; a long unbreakable run
		// (a URL, a code line) is cut by width here so the pane holds.
		if lipgloss.Width(l) > width {
			lines = append(lines, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
			continue
		}
		lines = append(lines, l)
	}
	lines = trimBlank(lines)
	c.m[key] = lines
	sharedProse.Store(sk, lines)
	return lines
}

// sharedProse is rendered prose across every screen of the process
// (read-only once stored).
var sharedProse sync.Map

type sharedKey struct {
	style string
	width int
	md    string
}

// trimBlank drops blank lines at both ends.
func trimBlank(lines []string) []string {
	blank := func(s string) bool { return strings.TrimSpace(ansi.Strip(s)) == "" }
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// reflow joins a paragraph's or list item's soft line breaks, so the text
// wraps to the pane instead of to the source file: glamour kept each
// source line end, and a list item whose source wrapped left an orphan
// word on a line of its own ("majority" / "of its replicas…"). Code
// fences, tables, headings, quotes, new list items and hard breaks (two
// spaces or a backslash at the end) are kept.
func reflow(md string) string {
	lines := strings.Split(md, "\n")
	var out []string
	fence := false
	joinable := false // the last line out is text a next line may continue
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = !fence
			out, joinable = append(out, l), false
			continue
		case fence || t == "":
			out, joinable = append(out, l), false
			continue
		}
		if joinable && !startsBlock(t) {
			prev := out[len(out)-1]
			sep := " "
			if pr := []rune(prev); len(pr) > 0 && isCJK(pr[len(pr)-1]) && isCJK([]rune(t)[0]) {
				sep = ""
			}
			out[len(out)-1] = prev + sep + t
		} else {
			out = append(out, l)
		}
		joinable = !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "|") &&
			!strings.HasSuffix(l, "  ") && !strings.HasSuffix(l, "\\")
	}
	return strings.Join(out, "\n")
}

// startsBlock reports whether a trimmed line begins a Markdown block of
// its own rather than continuing the one above.
func startsBlock(t string) bool {
	for _, p := range []string{"- ", "* ", "+ ", "#", ">", "|"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i < len(t)-1 && (t[i] == '.' || t[i] == ')') && t[i+1] == ' '
}

// joinCJKLines removes the soft line break between two CJK characters:
// Markdown turns it into a space, which Chinese text does not have.
func joinCJKLines(md string) string {
	rs := []rune(md)
	var b strings.Builder
	for i, r := range rs {
		if r == '\n' && i > 0 && i+1 < len(rs) && isCJK(rs[i-1]) && isCJK(rs[i+1]) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || (r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF)
}

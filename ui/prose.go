package ui

import (
	"regexp"
	"strings"
	"sync"
	"unicode"

	"charm.land/glamour/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/rmlab/lab/internal/plain"
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
		// Line ends kept: reflow has joined the soft breaks already, and
		// wrapCJK's breaks must stay where it put them.
		r, err := glamour.NewTermRenderer(glamour.WithStyles(st.Glamour), glamour.WithWordWrap(width), glamour.WithPreservedNewLines())
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
	lines := render(c.r, md, width, width)
	// x/ansi's wrap leaves a stop or a dash alone on a line when the word
	// before it ends exactly at the width ("…in time" / "."): the block is
	// wrapped a cell or two narrower instead.
	for narrower := 1; narrower <= 3 && loneMark(lines); narrower++ {
		r, err := glamour.NewTermRenderer(glamour.WithStyles(st.Glamour), glamour.WithWordWrap(width-narrower), glamour.WithPreservedNewLines())
		if err != nil {
			break
		}
		lines = render(r, md, width-narrower, width)
	}
	lines = trimBlank(lines)
	c.m[key] = lines
	sharedProse.Store(sk, lines)
	return lines
}

// render is md through r (wrapping at wrap cells), every line at most
// width cells.
func render(r *glamour.TermRenderer, md string, wrap, width int) []string {
	// A lesson file is text someone wrote: glamour passes its escapes on.
	src := wrapCJK(reflow(joinCJKLines(asciiSafe(plain.Lines(md)))), wrap)
	var out string
	if r != nil {
		if s, err := r.Render(src); err == nil {
			out = s
		}
	}
	if out == "" {
		out = src
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		// A long unbreakable run (a URL, a code line) is cut by width
		// here so the pane holds.
		if lipgloss.Width(l) > width {
			lines = append(lines, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// loneMark reports a line that is a stop, comma or dash alone, or begins
// with one: a wrap that went wrong.
func loneMark(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(strings.ReplaceAll(ansi.Strip(l), "\u00a0", " "))
		if t == "" {
			continue
		}
		switch t[0] {
		case '.', ',', ';', ':', ')', '!', '?':
			if len(t) == 1 || t[1] == ' ' {
				return true
			}
		case '-':
			if len(t) == 1 {
				return true
			}
		}
	}
	return false
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
	fence, code := false, false
	joinable := false // the last line out is text a next line may continue
	inList := false   // the last line at the margin began a list item
	for _, l := range lines {
		t := strings.TrimSpace(l)
		indented := strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t")
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fence = !fence
			out, joinable = append(out, l), false
			continue
		case fence || t == "":
			out, joinable = append(out, l), false
			continue
		case indented && (code || (!joinable && !inList)):
			// An indented code block (after a blank line, outside a list):
			// its lines are the author's, as in a fence.
			code = true
			out, joinable = append(out, l), false
			continue
		}
		code = false
		if l == t {
			inList = startsBlock(t) && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ">") && !strings.HasPrefix(t, "|")
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

// headingPrefix is an ATX heading's marker.
var headingPrefix = regexp.MustCompile(`^#{1,6}\s+`)

// listPrefix is a Markdown line's indentation and list or quote marker.
var listPrefix = regexp.MustCompile(`^(\s*)([-*+]\s+|\d+[.)]\s+|>\s*)?`)

// wrapCJK breaks each line of md that holds Chinese and is wider than
// width cells, between characters, as Chinese is wrapped: glamour (like
// lipgloss.Wrap) breaks only at spaces and ASCII punctuation, so a
// sentence with no space in it moved whole to the next line, leaving a
// list's bullet alone above it. Continuation lines are indented under the
// item so Markdown keeps them in it; code fences, tables and headings are
// left alone.
func wrapCJK(md string, width int) string {
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	fence := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
		}
		if fence || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "|") ||
			renderedWidth(l) <= width || !strings.ContainsFunc(l, isCJK) {
			out = append(out, l)
			continue
		}
		if h := headingPrefix.FindString(l); h != "" {
			// A heading is one line in Markdown: a space at each break
			// lets glamour break it there (the space falls at a line end).
			first, rest := width-displayWidth(h), width
			if strings.TrimSpace(h) == "#" {
				first, rest = width-2, width-2 // a title is drawn without its #, a space each side
			}
			out = append(out, h+strings.Join(breakCJK(l[len(h):], first, rest), " "))
			continue
		}
		prefix := listPrefix.FindString(l)
		pw := displayWidth(prefix)
		if width-pw < 10 {
			out = append(out, l)
			continue
		}
		// glamour draws a list item's later lines at the margin, not under
		// the text: only the first line loses the marker's cells.
		for i, piece := range breakCJK(l[len(prefix):], width-pw, width) {
			if i == 0 {
				out = append(out, prefix+piece)
			} else {
				out = append(out, strings.Repeat(" ", pw)+piece)
			}
		}
	}
	return strings.Join(out, "\n")
}

// renderedWidth is the cells Markdown text s takes once rendered: an
// emphasis's * and ** take none (a code span's backticks become its
// padding, as wide).
func renderedWidth(s string) int { return displayWidth(strings.ReplaceAll(s, "*", "")) }

// breakCJK wraps s to w cells (its first line to first): at spaces, and
// between two Chinese characters, never before a closing mark (，。） …),
// after an opening one (（「 …) or beside an emphasis's * (a ** cut from its
// word by a line end shows as itself). A piece longer than w (a long URL)
// stands on its own line.
func breakCJK(s string, first, w int) []string { return breakText(s, first, w, renderedWidth) }

// breakText is breakCJK measuring with width (displayWidth for text that
// is not Markdown).
func breakText(s string, first, w int, width func(string) int) []string {
	const closing, opening = "，。、；：！？）」』》〉】,.;:!?)", "（「『《〈【("
	var tokens []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			tokens = append(tokens, cur.String())
			cur.Reset()
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == ' ':
			cur.WriteRune(r)
			flush()
		case isCJK(r) && strings.ContainsRune(closing, r):
			cur.WriteRune(r) // stays with what it closes
		case isCJK(r):
			prevGlue := i > 0 && (strings.ContainsRune(opening, rs[i-1]) || rs[i-1] == '*')
			if !prevGlue {
				flush()
			}
			cur.WriteRune(r)
			if strings.ContainsRune(opening, r) {
				continue // an opening mark waits for the character it opens
			}
			if i+1 < len(rs) && !(isCJK(rs[i+1]) && !strings.ContainsRune(closing, rs[i+1])) && rs[i+1] != ' ' && rs[i+1] != '*' && !strings.ContainsRune(closing, rs[i+1]) {
				flush() // Latin right after Chinese: a token of its own
			}
		default:
			if i > 0 && isCJK(rs[i-1]) && !strings.ContainsRune(opening, rs[i-1]) && r != '*' {
				flush()
			}
			cur.WriteRune(r)
		}
	}
	flush()
	var out []string
	var line strings.Builder
	lw := 0
	shown := width
	limit := first
	for _, tok := range tokens {
		tw := shown(strings.TrimRight(tok, " "))
		if lw > 0 && lw+tw > limit {
			limit = w
			out = append(out, strings.TrimRight(line.String(), " "))
			line.Reset()
			lw = 0
		}
		line.WriteString(tok)
		lw += shown(tok)
	}
	if line.Len() > 0 {
		out = append(out, strings.TrimRight(line.String(), " "))
	}
	return out
}

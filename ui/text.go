package ui

import (
	"fmt"
	"hash/fnv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/plain"
)

// asciiReplacer swaps East-Asian-ambiguous glyphs for ASCII. A terminal in a
// CJK locale draws those two cells wide while every width library counts
// one, which pushes the right border of a pane out of line. Lesson text,
// observed output and worker logs all pass through it before layout.
//
// Chinese text's dash, "——", is kept: it has no ASCII form a Chinese
// reader reads as a dash ("----" reads as garbage), and its glyph is as
// ambiguous as the "│" and "─" of every pane's border, so a terminal that
// draws it wide has misdrawn the borders already. (Listed first: the
// replacer tries its pairs in order.)
var asciiReplacer = strings.NewReplacer(
	"——", "——",
	"…", "...", "→", "->", "←", "<-", "↑", "^", "↓", "v", "⇒", "=>",
	"•", "*", "·", ".", "●", "*", "○", "o", "◦", "o", "■", "#", "□", "[]",
	"✓", "ok", "✔", "ok", "✗", "x", "✘", "x", "×", "x", "÷", "/",
	"“", "\"", "”", "\"", "‘", "'", "’", "'", "«", "<<", "»", ">>", "‹", "<", "›", ">",
	"—", "--", "–", "-", "±", "+-", "§", "S", "°", " deg", "※", "*",
	"\t", "    ", "\r", "",
)

// asciiSafe makes text safe to place inside a bordered pane.
func asciiSafe(s string) string { return asciiReplacer.Replace(s) }

// fitLine cuts or pads one line to exactly w cells (ANSI-aware, CJK-aware).
// A cut line ends in …: the learner sees that something is missing, never
// a word that merely stops.
func fitLine(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := displayWidth(s)
	if n > w {
		s = ansi.Truncate(s, w, "…")
		n = displayWidth(s)
	}
	if n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// fitBlock makes lines exactly w×h: extra lines are dropped, missing ones
// are blank.
func fitBlock(lines []string, w, h int) []string {
	out := make([]string, h)
	for i := 0; i < h; i++ {
		if i < len(lines) {
			out[i] = fitLine(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", max(w, 0))
		}
	}
	return out
}

// pane draws a rounded box of exactly w×h cells, border included (as Lip
// Gloss v2 counts widths), with the title set into the top border. The
// border is drawn by hand from fitted lines: nothing is re-wrapped, and a
// line can never push the right edge out.
func pane(st *Styles, active bool, title string, body []string, w, h int) string {
	// Most frames change one pane (a spinner, a poll's answer): the others
	// come from the cache instead of measuring every cell again. Measured
	// with lab bench workshop: rendering was most of the CPU of 40 screens.
	key := paneKey{active: active, title: title, body: strings.Join(body, "\n"), w: w, h: h}
	if out, ok := st.panes[key]; ok {
		return out
	}
	out := renderPane(st, active, title, body, w, h)
	if st.panes == nil || len(st.panes) > 64 {
		st.panes = map[paneKey]string{}
	}
	st.panes[key] = out
	return out
}

// paneKey is everything a pane's render depends on.
type paneKey struct {
	active bool
	title  string
	body   string
	w, h   int
}

func renderPane(st *Styles, active bool, title string, body []string, w, h int) string {
	if w < 4 || h < 2 {
		return strings.TrimSuffix(strings.Repeat(strings.Repeat(" ", max(w, 0))+"\n", max(h, 0)), "\n")
	}
	iw, ih := w-2, h-2
	bs, ts := st.Border, st.Title
	if active {
		bs, ts = st.BorderOn, st.TitleOn
	}
	title = fitLine(" "+title+" ", min(displayWidth(" "+title+" "), max(iw-2, 0)))
	rest := max(iw-1-displayWidth(title), 0)
	var b strings.Builder
	b.WriteString(bs.Render("╭─") + ts.Render(title) + bs.Render(strings.Repeat("─", rest)+"╮"))
	side := bs.Render("│")
	for _, l := range fitBlock(body, iw, ih) {
		b.WriteString("\n" + side + l + side)
	}
	// Lines the pane cannot hold are counted in its bottom border: a
	// panel never hides rows unannounced.
	if hidden := len(body) - ih; hidden > 0 && iw >= 8 {
		more := fmt.Sprintf("(+%d)", hidden)
		b.WriteString("\n" + bs.Render("╰─") + ts.Render(more) + bs.Render(strings.Repeat("─", max(iw-1-len(more), 0))+"╯"))
		return b.String()
	}
	b.WriteString("\n" + bs.Render("╰"+strings.Repeat("─", iw)+"╯"))
	return b.String()
}

// wrapText wraps plain or styled text to w cells; CJK runs with no spaces
// are broken by width, never by byte count.
func wrapText(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var lines []string
	wrapped := lipgloss.Wrap(s, w, "")
	if strings.ContainsFunc(s, isCJK) && !strings.Contains(s, "\x1b") {
		// Chinese breaks between characters, its punctuation kept with
		// what it closes; lipgloss.Wrap broke only at spaces, and then cut
		// a Latin word beside the Chinese in two ("SELE" / "CT").
		var out []string
		for _, para := range strings.Split(s, "\n") {
			out = append(out, breakText(para, w, w, displayWidth)...)
		}
		wrapped = strings.Join(out, "\n")
	}
	for _, l := range strings.Split(wrapped, "\n") {
		// A space left at a break would push a full line one cell past
		// the pane, and its last letter would be cut for it.
		l = strings.TrimRight(l, " ")
		if displayWidth(l) > w {
			// lipgloss.Wrap leaves a line ending in " -" one cell too
			// wide ("406 PRECONDITION_FAILED - …"): broken by width.
			lines = append(lines, strings.Split(ansi.Hardwrap(l, w, true), "\n")...)
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// padRight pads s to w cells (never truncates).
func padRight(s string, w int) string {
	if n := displayWidth(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// padLeft right-aligns s in w cells.
func padLeft(s string, w int) string {
	if n := displayWidth(s); n < w {
		return strings.Repeat(" ", w-n) + s
	}
	return s
}

// oneLine flattens a value for a table cell: a value read from a table, a
// message or a process is text from outside the code, so every escape
// sequence and control character goes (plain.Text) before a terminal
// gets it.
func oneLine(s string) string {
	return plain.Text(asciiSafe(s))
}

// displayWidth is the cells one line takes on screen (never len): CJK is
// two cells, escape codes none. Plain ASCII, most of what the panels show,
// takes the fast path: it is most of the frame time otherwise.
func displayWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// styleLines styles each line.
func styleLines(style interface{ Render(...string) string }, lines []string) []string {
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return lines
}

// wrapCode wraps a line of code, SQL or flags at spaces only: prose
// wrapping also breaks after a hyphen, and split --to into "-" and "-to".
// A word wider than w is cut by width; continuation lines keep the
// line's indent.
func wrapCode(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	if displayWidth(s) <= w {
		return []string{s}
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	if len(indent) >= w/2 {
		indent = ""
	}
	var lines []string
	cur, empty := indent, true // empty: cur holds the indent only
	for _, word := range strings.Split(strings.TrimLeft(s, " "), " ") {
		cand := cur + " " + word
		if empty {
			cand = cur + word
		}
		if displayWidth(cand) <= w {
			cur, empty = cand, false
			continue
		}
		if !empty {
			lines = append(lines, cur)
			cand = indent + word
		}
		for displayWidth(cand) > w { // one word wider than the pane
			head := ansi.Truncate(cand, w, "")
			lines = append(lines, head)
			cand = indent + cand[len(head):]
		}
		cur, empty = cand, cand == indent
	}
	if !empty {
		lines = append(lines, cur)
	}
	return lines
}

// onPath is prose without the paragraphs of a path the run did not take
// (<!-- when=CHOICE:OPTION --> before them: lab.PathOf): a paragraph
// telling what happened on one path is never shown as if it happened on
// another. Before a run, every paragraph shows, its marker removed.
func onPath(prose string, s *session) string {
	if !strings.Contains(prose, "<!-- when=") {
		return prose
	}
	var keep []string
	for _, para := range strings.Split(prose, "\n\n") {
		when, text := lab.PathOf(para)
		if when != "" && s != nil && !s.run.AppliesWhen(when) {
			continue
		}
		keep = append(keep, text)
	}
	return strings.Join(keep, "\n\n")
}

func fnv32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

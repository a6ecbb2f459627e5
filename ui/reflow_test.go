package ui

import (
	"fmt"
	"github.com/rmlab/lab/labs"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A list item whose source lines wrap reflows to the pane: no word is left
// on a line of its own (glamour kept every source line end, so lesson 19's
// first screen showed "majority" alone), and a code fence keeps its lines.
func TestProseReflowsListItemsWithoutOrphanWords(t *testing.T) {
	md := "A cluster shares its metadata:\n\n- a classic queue lives on one node, its home (by default the node the\n  declaring client was connected to). The other nodes know it exists and\n  route to it, but hold none of its messages.\n- a quorum queue is a Raft group: each message is written to a majority\n  of its replicas before the publisher's confirm.\n\n```text\nline one\nline two\n```\n"
	var c proseCache
	for _, w := range []int{50, 70, 84} {
		ls := c.lines(fmt.Sprint(w), md, w, NewStyles(true, true))
		text := ansi.Strip(strings.Join(ls, "\n"))
		for _, l := range strings.Split(text, "\n") {
			if f := strings.Fields(l); len(f) == 1 && f[0] != "one" && f[0] != "two" && !strings.HasPrefix(f[0], "line") {
				t.Errorf("width %d: an orphan word %q:\n%s", w, f[0], text)
			}
		}
		if !strings.Contains(text, "line one") || !strings.Contains(text, "line two") || strings.Contains(text, "line one line two") {
			t.Errorf("width %d: the code fence was reflowed:\n%s", w, text)
		}
	}
	if got := reflow("中文\n  继续\n- 项"); got != "中文继续\n- 项" {
		t.Errorf("CJK continuation: %q", got)
	}
}

// An indented code block keeps its lines (lesson 11's diagram of the three
// links was joined into one line that wrapped, "ack" alone at the end);
// an indented paragraph inside a list is still the list's.
func TestAnIndentedCodeBlockKeepsItsLines(t *testing.T) {
	md := "A paid order travels:\n\n    business DB -> producer -> broker\n                 confirm     ack\n\nEach link.\n\n- item\n\n    more of the item\n    and its next line"
	got := reflow(md)
	for _, want := range []string{"    business DB -> producer -> broker\n                 confirm     ack", "    more of the item and its next line"} {
		if !strings.Contains(got, want) {
			t.Errorf("reflow lost %q:\n%s", want, got)
		}
	}
}

// Chinese wraps between characters, its punctuation kept with what it
// closes: a list item whose sentence has no space in it no longer leaves
// its bullet alone on a line (lesson 17 in zh).
func TestChineseWrapsBetweenCharacters(t *testing.T) {
	var c proseCache
	md := "- 它本身不负责排序或去重；消费者数据库之外的副作用（支付、短信）仍然需要各自的幂等键。"
	ls := c.lines("cjk", md, 40, NewStyles(true, true))
	text := ansi.Strip(strings.Join(ls, "\n"))
	if o := orphanLines(ls, 40); len(o) > 0 {
		t.Errorf("orphans: %v\n%s", o, text)
	}
	for _, l := range strings.Split(text, "\n") {
		if tl := strings.TrimSpace(l); tl != "" && strings.ContainsAny(tl[:3], "；，。）") {
			t.Errorf("a line begins with a closing mark: %q", l)
		}
		if displayWidth(strings.TrimRight(l, " ")) < 30 && !strings.HasSuffix(strings.TrimSpace(l), "。") {
			t.Errorf("a short line that is not the item's last: %q\n%s", l, text)
		}
	}
	if got := strings.Join(breakCJK("（支付、短信）仍然", 4, 4), "|"); got != "（支|付、|短|信）|仍然" {
		t.Errorf("breakCJK: %q", got)
	}
}

// No built-in lesson's prose, in en or zh, leaves a word, a Chinese
// character or a bullet alone on a line at any of these widths (the
// lesson pane's at 80, 120, 160 and 200 columns, and narrow ones). The
// screen audit checks the same at the sizes it walks.
func TestNoLessonProseLeavesAWordAlone(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		ls, err := labs.Builtin(lang)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			for _, w := range []int{40, 50, 58, 64, 66, 78, 85, 100, 118} {
				var c proseCache
				for bi, b := range l.Blocks {
					if b.Step != nil {
						continue
					}
					for _, o := range orphanLines(c.lines(fmt.Sprint(bi), proseOnly(b.Prose), w, NewStyles(true, true)), w) {
						t.Errorf("%s lesson %d, width %d, prose block %d: %s", lang, l.Number, w, bi, o)
					}
				}
			}
		}
	}
}

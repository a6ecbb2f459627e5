package ui

import (
	"fmt"
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

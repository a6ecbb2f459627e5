package chaos_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/chaos"
)

func TestTheReportIsOnePageWithTheTimelineTheCountsAndEscapedText(t *testing.T) {
	s := &chaos.Summary{Seed: 3, Pipeline: "mark-before-publish", Orders: 10, Committed: 10, Once: 8, Lost: 2,
		Violations: []string{"lost: 2 committed orders were never applied (orders [4 5])"},
		Faults:     map[chaos.FaultKind]int{chaos.CutAMQP: 1}, Missed: map[chaos.FaultKind]int{},
		Timeline: chaos.Timeline{Seconds: []chaos.Bucket{{Committed: 5, Published: 5, Applied: 4}, {Committed: 5, Published: 4, Applied: 4}},
			Faults: []chaos.Mark{{T: 700, Kind: chaos.CutAMQP, Target: "relays", Result: "<script>alert(1)</script>"}}}}
	var b bytes.Buffer
	if err := chaos.Report(&b, s); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<svg", "<polyline", "FAIL", "mark-before-publish", "lost: 2 committed orders", "cut-amqp", "0.70s", "&lt;script&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Errorf("the report runs or fetches something: it must be one self-contained page")
	}
}

// A program's status, a message id or a fault's result may carry escapes:
// the page and the history file (read with cat and tail -f) hold none, C1
// controls and bidi overrides neither, and the text around them stays.
func TestTheReportAndTheHistoryHoldNoEscapeFromOutside(t *testing.T) {
	hostile := "st\x1b]2;title\x07at \u009b2J u\u202es \x1b[2Jok"
	s := &chaos.Summary{Seed: 3, Pipeline: "p", Orders: 1, Committed: 1, Once: 1, Notes: []string{hostile},
		Faults: map[chaos.FaultKind]int{}, Missed: map[chaos.FaultKind]int{},
		Timeline: chaos.Timeline{Faults: []chaos.Mark{{T: 1, Kind: chaos.CutAMQP, Target: "relays", Result: hostile}}}}
	var page, hist bytes.Buffer
	if err := chaos.Report(&page, s); err != nil {
		t.Fatal(err)
	}
	h := chaos.NewHistory(&hist)
	h.Wire("consumer-1", "sent", "order-7-"+hostile, hostile)
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"report": page.String(), "history": hist.String()} {
		for _, r := range out {
			if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e') {
				t.Errorf("the %s holds %U:\n%q", name, r, out)
				break
			}
		}
	}
	if !strings.Contains(page.String(), "stat 2J us ok") {
		t.Errorf("the report lost the text around the escapes:\n%s", page.String())
	}
	if !strings.Contains(hist.String(), `\u009b2J u\u202es`) {
		t.Errorf("the history lost what the id carried (a C1 and a bidi override as \\u escapes):\n%s", hist.String())
	}
}

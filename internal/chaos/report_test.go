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

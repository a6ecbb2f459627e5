package steps

import (
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/catalog"
)

// Every sentence the lab writes has its Chinese, taking the same arguments.
func TestEveryOwnSentenceHasItsChineseWithTheSameArguments(t *testing.T) {
	if n := len(catalog.Lab().Phrases()); n < 100 {
		t.Fatalf("the lab's table holds %d sentences: its packages did not add theirs", n)
	}
	for _, p := range catalog.Lab().Check("zh") {
		t.Error(p)
	}
}

func TestUntranslatedFindsTheLabsEnglishAndLeavesDataAlone(t *testing.T) {
	l := &lab.Lesson{Blocks: []lab.Block{{Step: &lab.Step{Kind: "expect", Body: "contains applied: +10 points to user 7"}}}}
	said := sayKilled.F("c1", 42, "after-ack")
	for _, c := range []struct {
		obs  string
		want bool
	}{
		{said, false},
		{"the broker ate the message", true}, // the lab's words, in no table
		{"+0.12s applied: +10 points to user 7 (order:42:paid, event-001)", false},            // a program's log
		{"main> UPDATE points_account SET points=points+10 WHERE user_id=7;", false},          // SQL
		{"[B] ERROR 1213 (40001): Deadlock found when trying to get lock", false},             // the server's words
		{"✓ contains applied: +10 points to user 7", false},                                   // the lesson's expectation
		{sayClosedByBroker.F("B", "406 PRECONDITION_FAILED - unknown delivery tag 1"), false}, // the broker's words inside the lab's
		{"channel B closed by the broker, it seems", true},
	} {
		got := Untranslated("zh", l, []lab.Result{{Kind: "kill", Passed: true, Observed: c.obs}})
		if (len(got) > 0) != c.want {
			t.Errorf("%q: untranslated %v, want %v", c.obs, got, c.want)
		}
	}
	if got := Untranslated("zh", l, []lab.Result{{Kind: "kill", Observed: said}}); len(got) != 0 || !strings.Contains(InLanguage("zh", said), "进程") {
		t.Errorf("said in Chinese: %q (%v)", InLanguage("zh", said), got)
	}
}

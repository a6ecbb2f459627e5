package workshop_test

import (
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/workshop"
)

// A user name a client sends is written into the server's log and its
// refusals with every control, C1 and format character (a bidi override
// that would reorder the log line) made '?', and cut at 64 bytes saying so.
func TestANameAClientSendsIsLoggedWithoutControlsOrBidi(t *testing.T) {
	for in, want := range map[string]string{
		"car\u202eol":           "car?ol",
		"a\x1b]2;t\x07b":        "a?]2;t?b",
		"a\u009b2Jb":            "a?2Jb",
		"a\u2066b\u2069":        "a?b?",
		"alice":                 "alice",
		strings.Repeat("x", 70): strings.Repeat("x", 64) + "…",
	} {
		if got := workshop.SafeName(in); got != want {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

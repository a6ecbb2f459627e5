package plain

import (
	"strings"
	"testing"
)

// Lines removes what Text removes, carriage returns too, and keeps the
// lines and tabs around it.
func TestLinesRemovesEveryEscapeFamilyAndKeepsLinesAndTabs(t *testing.T) {
	for name, s := range hostile {
		in := "first\tline\n" + s + "\r\nlast"
		got := Lines(in)
		if !strings.HasPrefix(got, "first\tline\n") || !strings.HasSuffix(got, "\nlast") {
			t.Errorf("%s: %q lost its lines or tabs", name, got)
		}
		for _, r := range strings.NewReplacer("\n", "", "\t", "").Replace(got) {
			if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e' || r == '\u2066' || r == '\u2069' || r == '\u200b' {
				t.Errorf("%s: %q keeps %U", name, got, r)
			}
		}
		if !strings.Contains(got, "a") {
			t.Errorf("%s: %q lost the text around the escape", name, got)
		}
	}
	if s := "plain 文字\n\ttext"; Lines(s) != s {
		t.Errorf("Lines(%q) = %q, want it unchanged", s, Lines(s))
	}
}

// What passes a Writer reaches its writer plain, written in whatever
// pieces: a character cut between two writes stays whole.
func TestAWriterPassesOnPlainTextWhateverPiecesItIsWrittenIn(t *testing.T) {
	in := "消息 a\x1b]2;pwned\x07b\u009b2J\n\tc\u202ed 完\n"
	want := "消息 ab2J\n\tcd 完\n" // a C1 CSI loses its control; what followed is text
	for size := 1; size <= len(in); size++ {
		var out strings.Builder
		w := Writer(&out)
		for i := 0; i < len(in); i += size {
			piece := []byte(in[i:min(i+size, len(in))])
			if n, err := w.Write(piece); n != len(piece) || err != nil {
				t.Fatalf("pieces of %d: Write = %d, %v", size, n, err)
			}
		}
		got := out.String()
		if size >= len(in) && got != want {
			t.Errorf("in one write: %q, want %q", got, want)
		}
		if !strings.Contains(got, "消息") || !strings.Contains(got, "完") {
			t.Errorf("pieces of %d: a character was cut: %q", size, got)
		}
		for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
			if strings.Contains(got, bad) {
				t.Errorf("pieces of %d: %q reached the writer: %q", size, bad, got)
			}
		}
	}
}

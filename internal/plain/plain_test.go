package plain

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile is one of each family of escape a terminal acts on, each with
// the visible text around it that must survive.
var hostile = map[string]string{
	"OSC 8 link":        "a\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\b",
	"OSC 52 clipboard":  "a\x1b]52;c;cm0gLXJmIH4=\x07b",
	"OSC 2 title":       "a\x1b]2;pwned\x07b",
	"CSI 2J clear":      "a\x1b[2Jb",
	"CSI DSR":           "a\x1b[6nb",
	"CSI cursor move":   "a\x1b[10;10Hb",
	"C1 CSI U+009B":     "a\u009b2Jb",
	"C1 OSC U+009D":     "a\u009d2;t\u009cb",
	"raw 0x9B byte":     "a\x9b2Jb",
	"BEL":               "a\x07b",
	"bidi override":     "a\u202eb",
	"bidi isolate":      "a\u2066b\u2069",
	"backspace":         "a\x08b",
	"ESC at the end":    "ab\x1b",
	"DEL":               "a\x7fb",
	"zero-width space?": "a\u200bb",
}

func noEscapes(t *testing.T, name, got string) {
	t.Helper()
	for _, r := range got {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u202e' || r == '\u2066' || r == '\u2069' || r == '\u200b' {
			t.Errorf("%s: %q keeps %U", name, got, r)
		}
	}
}

func TestEveryEscapeFamilyIsRemovedAndTheTextAroundItKept(t *testing.T) {
	for name, in := range hostile {
		for fn, f := range map[string]func(string) string{"Line": func(s string) string { return Line(s, 255) }, "Text": Text, "CSV": CSV} {
			got := f(in)
			noEscapes(t, fn+" "+name, got)
			if !strings.HasPrefix(strings.TrimPrefix(got, "'"), "a") || !strings.Contains(got, "b") {
				t.Errorf("%s %s: %q lost the text around it", fn, name, got)
			}
		}
	}
}

func TestTextKeepsSpacesAndLineFlattens(t *testing.T) {
	if got := Text("id   name\tx\ny"); got != "id   name x y" {
		t.Errorf("Text: %q", got)
	}
	if got := Line("id   name\tx\ny", 255); got != "id name x y" {
		t.Errorf("Line: %q", got)
	}
	if got := Line("中文中文", 7); got != "中文" {
		t.Errorf("Line cut inside a character: %q", got)
	}
	if s := "plain ascii | 12"; Text(s) != s {
		t.Errorf("Text changed plain ASCII")
	}
}

func TestACSVCellNeverStartsAFormula(t *testing.T) {
	for _, in := range []string{"=HYPERLINK(\"http://x\")", "+1+1", "-2", "@SUM(A1)", "\x1b[2J=1+1"} {
		if got := CSV(in); strings.ContainsRune("=+-@", rune(got[0])) {
			t.Errorf("CSV(%q) = %q starts a formula", in, got)
		}
	}
	if got := CSV("lost 3"); got != "lost 3" {
		t.Errorf("CSV changed a plain cell: %q", got)
	}
}

func TestCutSaysItCutAndNeverSplitsACharacter(t *testing.T) {
	if got := Cut("short", 10); got != "short" {
		t.Errorf("Cut changed a short text: %q", got)
	}
	got := Cut(strings.Repeat("中", 10), 10)
	if !strings.HasSuffix(got, "…") || len(got) > 10 || !utf8.ValidString(got) {
		t.Errorf("Cut = %q (%d bytes)", got, len(got))
	}
}

// JSON keeps the data whole (a program decodes the same string) and
// hands a terminal no C1 control or bidi override.
func TestJSONEscapesWhatATerminalWouldActOn(t *testing.T) {
	in := map[string]string{"why": "a\u009b2Jb\u202ec\x1b]52;c;x\x07d é中 \ufffd"}
	b, _ := json.MarshalIndent(in, "", "  ")
	out := JSON(b)
	for _, r := range string(out) {
		if r != '\n' && (r < 0x20 || r >= 0x7f && r < 0xa0 || r == 0x202e) {
			t.Fatalf("the JSON carries %U: %q", r, out)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["why"] != in["why"] {
		t.Fatalf("decoded %q (%v), want %q", back["why"], err, in["why"])
	}
	// Through the lab's stdout (a Writer) the data is still whole.
	var shown strings.Builder
	Writer(&shown).Write(out)
	if err := json.Unmarshal([]byte(shown.String()), &back); err != nil || back["why"] != in["why"] {
		t.Fatalf("through a Writer, decoded %q (%v), want %q", back["why"], err, in["why"])
	}
	if p := []byte(`{"a": "é中"}`); string(JSON(p)) != string(p) {
		t.Errorf("printable text was changed: %s", JSON(p))
	}
}

// A kept screen keeps its colours and lines; every other escape goes.
func TestScreenKeepsColoursAndLinesOnly(t *testing.T) {
	for name, h := range hostile {
		in := "\x1b[1;38;5;196mtitle\x1b[m\n" + h + "\n\x1b[2mend\x1b[0m"
		got := Screen(in)
		want := "\x1b[1;38;5;196mtitle\x1b[m\n" + Text(h) + "\n\x1b[2mend\x1b[0m"
		if got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

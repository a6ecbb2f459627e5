package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// guides are the pages a newcomer reads: the README and the guides it
// links. labs/README.md has tests of its own (its steps and its worked
// example).
func guides(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no guides in docs/ (%v)", err)
	}
	return append([]string{"../../README.md", "../../TESTING.md"}, files...)
}

// shLine is one command of a guide's sh block, continuation lines joined.
type shLine struct {
	file string
	line int
	text string
}

// shLines are the commands of every ```sh block in file.
func shLines(t *testing.T, file string) []shLine {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []shLine
	in, cont := false, ""
	start := 0
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "```sh":
			in = true
			continue
		case in && l == "```":
			in = false
			continue
		case !in:
			continue
		}
		if cont == "" {
			start = i + 1
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cont += s + " "
			continue
		}
		text := strings.TrimSpace(cont + l)
		cont = ""
		// "lab: …" is the lab's own output shown beside the command (CI's
		// guide_block leaves it out too).
		if text != "" && !strings.HasPrefix(text, "#") && !strings.HasPrefix(text, "lab: ") {
			out = append(out, shLine{filepath.Base(file), start, text})
		}
	}
	return out
}

// words splits a command line as a shell would for the lab's purposes:
// quotes kept together, a comment, a redirection or a pipe ends it, and
// leading VAR=value assignments are dropped.
func words(text string) []string {
	var out []string
	var cur strings.Builder
	quote, has := rune(0), false
	flush := func() {
		if has {
			out = append(out, cur.String())
		}
		cur.Reset()
		has = false
	}
	for _, r := range text {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, has = r, true
		case r == ' ' || r == '\t':
			flush()
		case (r == '#' || r == '|' || r == '>') && !has:
			flush()
			return assignmentsDropped(out)
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	flush()
	return assignmentsDropped(out)
}

var assignment = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

func assignmentsDropped(w []string) []string {
	for len(w) > 0 && assignment.MatchString(w[0]) {
		w = w[1:]
	}
	return w
}

// notRunHere are the programs a guide shows that this test does not run:
// CI runs the container guide's blocks as written (.ci/run), and the rest
// start servers, engines or sessions a test must not.
var notRunHere = map[string]bool{"docker": true, "ssh": true, "eval": true, "export": true, "printf": true,
	"(umask": true, "apt-get": true, "bash": true}

// checkGuideLine is nil when the lab accepts the command as written: a lab
// command's flags and values parse (the command stops there), a go test's
// packages and -run patterns exist, a script it names is there.
func checkGuideLine(l shLine) error {
	w := words(l.text)
	if len(w) == 0 {
		return nil
	}
	switch {
	case w[0] == "lab":
		return labAccepts(w[1:])
	case len(w) > 2 && w[0] == "go" && w[1] == "run" && w[2] == "./cmd/lab":
		return labAccepts(w[3:])
	case w[0] == "go" && len(w) > 1 && (w[1] == "test" || w[1] == "install" || w[1] == "build"):
		return goPackagesExist(w[2:])
	case strings.HasPrefix(w[0], ".ci/"):
		if _, err := os.Stat(filepath.Join("../..", w[0])); err != nil {
			return fmt.Errorf("no script %s", w[0])
		}
		return nil
	case notRunHere[w[0]]:
		if w[0] == "bash" && len(w) > 1 && strings.HasPrefix(w[1], ".ci/") {
			if _, err := os.Stat(filepath.Join("../..", w[1])); err != nil {
				return fmt.Errorf("no script %s", w[1])
			}
		}
		return nil
	}
	return fmt.Errorf("%q: a command this test does not know (add it to notRunHere with why, or check it)", w[0])
}

// labAccepts runs the lab in this process with args, stopping it once its
// arguments have parsed.
func labAccepts(args []string) error {
	parsed := ""
	argsOnly = func(fs *flag.FlagSet) { parsed = fs.Name() }
	defer func() { argsOnly = nil }()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	if code != 0 || parsed == "" {
		return fmt.Errorf("lab %s: exit %d before its arguments were taken: %s", strings.Join(args, " "), code, strings.TrimSpace(errOut.String()))
	}
	return nil
}

var runPattern = regexp.MustCompile(`^\^?\(?([A-Za-z0-9_]+)`)

// goPackagesExist checks a go test line's ./packages and the test its -run
// names (the first name of the pattern, in one of those packages).
func goPackagesExist(args []string) error {
	var pkgs []string
	run := ""
	for i, a := range args {
		switch {
		case a == "-run" && i+1 < len(args):
			run = args[i+1]
		case strings.HasPrefix(a, "./"):
			dir := strings.TrimSuffix(a, "/...")
			if _, err := os.Stat(filepath.Join("../..", dir)); err != nil {
				return fmt.Errorf("no package %s", a)
			}
			pkgs = append(pkgs, dir)
		}
	}
	if run == "" || run == "'^$'" || run == "^$" {
		return nil
	}
	m := runPattern.FindStringSubmatch(run)
	if m == nil {
		return nil
	}
	for _, p := range pkgs {
		files, _ := filepath.Glob(filepath.Join("../..", p, "*_test.go"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if bytes.Contains(b, []byte("func "+m[1])) {
				return nil
			}
		}
	}
	return fmt.Errorf("-run %s: no test or benchmark starting %s in %v", run, m[1], pkgs)
}

// Every command a guide shows in an sh block is one the lab accepts as
// written, and the ones that need no server of their own and change
// nothing run for real.
func TestEveryCommandInTheGuidesIsOneTheLabAcceptsAsWritten(t *testing.T) {
	n := 0
	for _, f := range guides(t) {
		for _, l := range shLines(t, f) {
			n++
			if err := checkGuideLine(l); err != nil {
				t.Errorf("%s:%d: %s\n\t%v", l.file, l.line, l.text, err)
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d commands found in the guides' sh blocks", n)
	}
}

// Those that read and change nothing run as written and exit 0.
func TestTheGuidesCommandsThatChangeNothingRunAndExitZero(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ran := 0
	for _, f := range guides(t) {
		for _, l := range shLines(t, f) {
			w := words(l.text)
			if len(w) >= 3 && w[0] == "go" && w[1] == "run" && w[2] == "./cmd/lab" {
				w = append([]string{"lab"}, w[3:]...)
			}
			if len(w) < 2 || w[0] != "lab" {
				continue
			}
			if !(w[1] == "list" || w[1] == "check" || w[1] == "challenge" && len(w) > 2 && (w[2] == "list" || w[2] == "contract")) {
				continue
			}
			var out, errOut bytes.Buffer
			if code := run(w[1:], &out, &errOut); code != 0 || out.Len()+errOut.Len() == 0 {
				t.Errorf("%s:%d: %s: exit %d, printed nothing\n%s", l.file, l.line, l.text, code, errOut.String())
			}
			ran++
		}
	}
	if ran < 3 {
		t.Errorf("only %d such commands ran", ran)
	}
}

// The check fails a command the lab would refuse, a package or a test that
// is not there, and a program it does not know.
func TestTheGuidesCheckFailsACommandTheLabWouldRefuse(t *testing.T) {
	for _, text := range []string{
		"lab replay --all --no-such-flag",
		"lab chaos --seed seven",
		"lab nosuchcommand",
		"go run ./cmd/lab replay --parallel",
		"go test -count=1 ./internal/nosuchpackage",
		"go test -count=1 -run TestNoSuchTestAnywhere ./internal/chaos",
		"rm -rf /",
	} {
		if err := checkGuideLine(shLine{"x.md", 1, text}); err == nil {
			t.Errorf("%q passed the check", text)
		}
	}
	for _, text := range []string{
		`LAB_CHAOS_SEEDS=2 go test -count=1 -v -run TestTheSafePipeline ./internal/chaos`,
		`lab replay --all --json > replay.json`,
		`lab room --room monday --say "five minutes left"  # a banner`,
	} {
		if err := checkGuideLine(shLine{"x.md", 1, text}); err != nil {
			t.Errorf("%q failed the check: %v", text, err)
		}
	}
}

// The README stays one a newcomer reads whole: at most 150 lines, the two
// commands in its first 40, and a link to every guide in docs/.
func TestTheReadmeFitsOnAScreenOrTwoAndLinksEveryGuide(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 150 {
		t.Errorf("README.md is %d lines, more than 150: move the detail into a guide", len(lines))
	}
	head := strings.Join(lines[:min(40, len(lines))], "\n")
	for _, c := range []string{"\ngo run ./cmd/lab\n", "\ngo test -count=1 -timeout 10m ./...\n"} {
		if !strings.Contains(head, c) {
			t.Errorf("README.md's first 40 lines lack %q", strings.TrimSpace(c))
		}
	}
	for _, g := range guides(t)[2:] {
		if name := "docs/" + filepath.Base(g); !strings.Contains(string(b), "("+name+")") {
			t.Errorf("README.md links no %s", name)
		}
	}
}

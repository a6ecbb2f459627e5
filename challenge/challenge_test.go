package challenge_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rmlab/lab/challenge"
)

func TestEveryChallengeIsWrittenInEveryLanguageWithTheSameRunAndAsManyHints(t *testing.T) {
	en, err := challenge.All("en")
	if err != nil {
		t.Fatal(err)
	}
	if len(en) < 6 {
		t.Fatalf("%d challenges; the ladder has at least once, business-key, conflict, relay, sms and order", len(en))
	}
	zh, err := challenge.All("zh")
	if err != nil {
		t.Fatal(err)
	}
	if len(zh) != len(en) {
		t.Fatalf("%d challenges in en, %d in zh", len(en), len(zh))
	}
	for i, e := range en {
		z := zh[i]
		if e.Name != z.Name || e.Number != i+1 || z.Number != e.Number || e.Role != z.Role || e.Orders != z.Orders ||
			e.Duration != z.Duration || !slices.Equal(e.Faults, z.Faults) || e.Every != z.Every || e.Copies != z.Copies ||
			e.Resend != z.Resend || e.Conflict != z.Conflict || e.Starter != z.Starter || !slices.Equal(e.Solutions, z.Solutions) {
			t.Errorf("%s and %s do not run the same challenge (or are not numbered 1, 2, …)", e.File, z.File)
		}
		if len(e.Hints) != len(z.Hints) || len(e.Hints) < 2 {
			t.Errorf("%s has %d hints, %s %d (at least 2, as many in each)", e.File, len(e.Hints), z.File, len(z.Hints))
		}
		if e.Title == z.Title || e.Text == z.Text {
			t.Errorf("%s is not translated", z.File)
		}
		for _, s := range e.Solutions {
			if _, err := os.Stat(filepath.Join("solutions", s)); err != nil {
				t.Errorf("%s names the solution %s, which is not in solutions/", e.File, s)
			}
		}
	}
	if challenge.Contract("en") == challenge.Contract("zh") || !strings.Contains(challenge.Contract("zh"), "LAB_AMQP_URL") {
		t.Error("the contract is not in both languages")
	}
}

func TestAPageThatCannotRunIsRefusedNamingTheFileAndWhat(t *testing.T) {
	good := "# T\n\n```challenge\nname: x\nnumber: 1\nrole: consumer\nstarter: consumer\n```\n\nText.\n\n## Hints\n\n- one\n- two\n"
	if _, err := challenge.Parse("en/01-x.md", good); err != nil {
		t.Fatalf("a good page: %v", err)
	}
	for _, c := range []struct{ page, want string }{
		{strings.Replace(good, "```challenge\n", "```lesson\n", 1), "no ```challenge block"},
		{strings.Replace(good, "role: consumer", "role: producer", 1), `role: "producer"`},
		{strings.Replace(good, "starter: consumer", "starter: java", 1), `starter: "java"`},
		{strings.Replace(good, "role: consumer", "role: relay\nsms: true", 1), "sms: true is the consumer's effect"},
		{strings.Replace(good, "role: consumer", "role: relay\norder: true", 1), "order: true is the consumer's effect"},
		{strings.Replace(good, "number: 1\n", "", 1), "needs name: and number:"},
		{strings.Replace(good, "name: x\n", "name: x\nfaults: kill-everything\n", 1), "kill-everything"},
		{strings.Replace(good, "name: x\n", "name: x\nduration: soon\n", 1), "duration"},
		{strings.Replace(good, "name: x\n", "name: x\ncolour: red\n", 1), `unknown key "colour"`},
		{strings.Replace(good, "## Hints\n\n- one\n- two\n", "", 1), "no hints"},
	} {
		_, err := challenge.Parse("en/01-x.md", c.page)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "en/01-x.md") {
			t.Errorf("want an error naming the file and %q, got %v", c.want, err)
		}
	}
	if _, err := challenge.Parse("en/01-y.md", good); err == nil {
		t.Error("a file named for another challenge was taken")
	}
}

func TestInitWritesARunnableStarterAndNeverOverwritesAnything(t *testing.T) {
	c, err := challenge.Named("en", "once")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "mine")
	files, err := challenge.Init(c, "go", dir, c.Text)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"main.go", "go.mod", "go.sum", "README.md"} {
		if !slices.Contains(files, filepath.Join(dir, f)) {
			t.Errorf("init wrote %v, not %s", files, f)
		}
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(readme), "lab challenge run once --seed 1 -- go run "+dir) {
		t.Errorf("the README does not say how to run it:\n%s", readme)
	}
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("// mine\n"), 0o644)
	os.Remove(filepath.Join(dir, "README.md"))
	if _, err := challenge.Init(c, "go", dir, c.Text); err == nil || !strings.Contains(err.Error(), "main.go") {
		t.Fatalf("a second init over the learner's work: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "main.go")); string(b) != "// mine\n" {
		t.Error("init overwrote the learner's main.go")
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err == nil {
		t.Error("a refused init still wrote the README")
	}
	if _, err := challenge.Init(c, "cobol", t.TempDir(), c.Text); err == nil {
		t.Error("a starter in cobol")
	}
	// Every challenge has a starter in every language.
	all, _ := challenge.All("en")
	for _, c := range all {
		for _, lang := range challenge.Languages {
			if _, err := challenge.Init(c, lang, t.TempDir(), c.Text); err != nil {
				t.Errorf("%s has no %s starter: %v", c.Name, lang, err)
			}
		}
	}
	py := t.TempDir()
	files, err = challenge.Init(c, "python", py, c.Text)
	if err != nil || !slices.Contains(files, filepath.Join(py, "main.py")) {
		t.Fatalf("python starter: %v %v", files, err)
	}
}

func TestGoRunOfAFolderWithItsOwnModuleRunsFromInsideIt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644)
	for _, c := range []struct{ in, want []string }{
		{[]string{"go", "run", dir}, []string{"go", "-C", dir, "run", "."}},
		{[]string{"go", "run", dir, "--flag"}, []string{"go", "-C", dir, "run", ".", "--flag"}},
		{[]string{"go", "run", "./challenge/solutions/go/once"}, []string{"go", "run", "./challenge/solutions/go/once"}},
		{[]string{"python3", "main.py"}, []string{"python3", "main.py"}},
	} {
		if got := challenge.Command(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Command(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The starters in the binary are the ones in the source, and their go.mod
// asks for the client libraries the lab itself is built with.
func TestTheGoStartersModuleRequiresTheLabsOwnClientLibraries(t *testing.T) {
	mod, err := os.ReadFile("starters/go/go.mod.txt")
	if err != nil {
		t.Fatal(err)
	}
	lab, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(mod), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && strings.Contains(f[0], ".") && !strings.Contains(string(lab), f[0]+" "+f[1]) {
			t.Errorf("the starter requires %s %s; the lab is built with another version (see ../go.mod)", f[0], f[1])
		}
	}
}

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/catalog"
)

// A learner's mistakes before the screen opens, each said in Chinese with
// --lang zh: no English sentence outside code (`lab list`), names and what
// the system itself said (connection refused); the same mistake in
// English is English.
func TestALearnersErrorsBeforeTheScreenAreSaidInChinese(t *testing.T) {
	down := []string{"--no-docker", "--mysql", "root@tcp(127.0.0.1:1)/", "--amqp", "amqp://guest:guest@127.0.0.1:1/", "--redis", "127.0.0.1:1"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"no such lesson", []string{"open", "999"}},
		{"open with nothing", []string{"open"}},
		{"flags before the command", []string{"--mysql", "x", "list"}},
		{"no such command", []string{"frob"}},
		{"an argument to list", []string{"list", "extra"}},
		{"a flag that does not exist", []string{"open", "1", "--bogus"}},
		{"a flag with no value", []string{"open", "1", "--mysql"}},
		{"every server down", append([]string{"open", "1"}, down...)},
		{"a URL for a DSN", []string{"open", "1", "--no-docker", "--mysql", "mysql://root@x/"}},
		{"a bad namespace", []string{"open", "1", "--no-docker", "--namespace", "BAD!"}},
		{"a bad Redis address", []string{"open", "1", "--no-docker", "--redis", "redis://x"}},
		{"replay of no lesson", []string{"replay", "999", "--no-docker"}},
		{"replay of nothing", []string{"replay"}},
		{"no such challenge", []string{"challenge", "run", "nosuch"}},
		{"no such subcommand", []string{"challenge", "frob"}},
		{"an argument to doctor", []string{"doctor", "extra"}},
		{"replay in no lanes", []string{"replay", "1", "--parallel", "-1"}},
		{"challenge init with no folder", []string{"challenge", "init", "once"}},
		{"a challenge with no program", []string{"challenge", "run", "once"}},
		{"a room with no name in it", []string{"challenge", "run", "once", "--room", "r", "--", "true"}},
		{"a workshop with no host", []string{"challenge", "run", "once", "--workshop", "nohost", "--", "true"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, en, zh bytes.Buffer
			// --lang goes before a program's "--".
			zhArgs := append([]string{}, c.args...)
			if i := slices.Index(zhArgs, "--"); i >= 0 {
				zhArgs = slices.Insert(zhArgs, i, "--lang", "zh")
			} else {
				zhArgs = append(zhArgs, "--lang", "zh")
			}
			if code := run(zhArgs, &out, &zh); code == 0 {
				t.Fatalf("exit 0 for a mistake; stderr %q", zh.String())
			}
			run(c.args, &out, &en)
			if zh.Len() == 0 {
				t.Fatal("nothing said")
			}
			if zh.String() == en.String() {
				t.Errorf("the same words in both languages: %q", zh.String())
			}
			for _, line := range strings.Split(zh.String(), "\n") {
				// What the system said inside the lab's sentence stays as
				// it came: "dial tcp …: connect: connection refused".
				if _, sys, ok := strings.Cut(line, "dial tcp "); ok {
					line = strings.TrimSuffix(line, sys)
				}
				// A command line is code: the prefix a message begins with,
				// an example indented under it.
				if strings.HasPrefix(strings.TrimSpace(line), "lab ") {
					if i := strings.Index(line, ": "); i >= 0 {
						line = line[i+2:]
					} else {
						line = ""
					}
				}
				if s := catalog.Sentence(line); s != "" {
					t.Errorf("English %q in a Chinese error line: %q", s, line)
				}
			}
		})
	}
}

// An author who asked for Chinese reads lab check's problems in Chinese:
// each line keeps its FILE:LINE, the names and the code it quotes.
func TestLabCheckSaysALessonsProblemsInChinese(t *testing.T) {
	dir := t.TempDir()
	bad := "```lesson\nid: 98-x\nnumber: 98\npart: 1\n```\n# T\n\n```wait worker=nobody until=zzz\n```\n\n```sql db=nosuch\nSELECT 1;\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "98-x.md"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errw, en bytes.Buffer
	if code := run([]string{"check", "--lang", "zh", dir}, &out, &errw); code != 1 {
		t.Fatalf("lab check of a bad lesson: exit %d\n%s%s", code, out.String(), errw.String())
	}
	run([]string{"check", dir}, &en, io.Discard)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 4 || out.String() == en.String() {
		t.Fatalf("the problems are not said in Chinese:\n%s", out.String())
	}
	for _, line := range lines {
		if !strings.HasPrefix(line, filepath.Join(dir, "98-x.md")+":") {
			t.Errorf("a problem lost its place: %q", line)
		}
		if s := catalog.Sentence(line); s != "" {
			t.Errorf("English %q in a Chinese problem: %q", s, line)
		}
	}
}

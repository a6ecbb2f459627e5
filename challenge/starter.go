package challenge

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/plain"
)

// The starters are programs of the lab's module (so vet and the tests
// build them); their go.mod and go.sum are kept as .txt, since a folder
// with a go.mod would be a module of its own and could not be embedded.
//
//go:embed starters
var starters embed.FS

// Languages are the languages a starter is written in.
var Languages = []string{"go", "python"}

// Init writes c's starter in language (go or python) into dir, with a
// README of the challenge, and returns the files written. It never
// overwrites: a file already there is an error, and nothing is written.
func Init(c *lab.Challenge, language, dir, text string) ([]string, error) {
	src := map[string]string{}
	switch language {
	case "go":
		src["main.go"] = "starters/go/" + c.Starter + "/main.go"
		src["go.mod"] = "starters/go/go.mod.txt"
		src["go.sum"] = "starters/go/go.sum.txt"
	case "python":
		src["main.py"] = "starters/python/" + c.Starter + "/main.py"
	default:
		return nil, fmt.Errorf("--lang %s: starters are written in go and python", language)
	}
	files := map[string][]byte{"README.md": []byte(readme(c, language, dir, text))}
	for name, from := range src {
		b, err := starters.ReadFile(from)
		if err != nil {
			return nil, fmt.Errorf("%s has no %s starter yet; --lang go has one", c.Name, language)
		}
		files[name] = b
	}
	var clash []string
	for name := range files {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			clash = append(clash, filepath.Join(dir, name))
		}
	}
	if len(clash) > 0 {
		return nil, fmt.Errorf("%s already there: nothing written; give an empty or new folder", strings.Join(clash, ", "))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var out []string
	for _, name := range []string{"main.go", "main.py", "go.mod", "go.sum", "README.md"} {
		b, ok := files[name]
		if !ok {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return out, err
		}
		out = append(out, filepath.Join(dir, name))
	}
	return out, nil
}

func readme(c *lab.Challenge, language, dir, text string) string {
	run := "go run " + dir
	if language == "python" {
		// A python3 with pika and PyMySQL: Debian's, after apt install
		// python3-pika python3-pymysql, or one with pip install pika PyMySQL.
		run = "python3 " + filepath.Join(dir, "main.py")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %d. %s\n\n%s\n\n", c.Number, c.Title, text)
	fmt.Fprintf(&b, "## Run it\n\n```\nlab challenge run %s --seed 1 -- %s\n```\n\n", c.Name, run)
	b.WriteString("The starter runs and fails: read the verdict's explanations, change the places marked\n" +
		"CHANGE, and run again. Pass under several seeds (`--seed 2`, `--seed 3`, …).\n" +
		"`lab challenge hint " + c.Name + "` gives one hint at a time; `lab challenge contract` prints\n" +
		"what the lab gives your program and what it checks.\n")
	if language == "python" {
		b.WriteString("\nThe starter needs pika and PyMySQL: `apt install python3-pika python3-pymysql` (then run it\n" +
			"with that python3, /usr/bin/python3, where another one comes first on your PATH) or\n`pip install pika PyMySQL`.\n")
	}
	return b.String()
}

// Command is how the lab runs argv. `go run DIR` of a folder with a
// go.mod of its own (what init writes) works only from inside that folder,
// so it runs as `go -C DIR run .`; anything else runs as given.
func Command(argv []string) []string {
	if len(argv) < 3 || argv[0] != "go" || argv[1] != "run" {
		return argv
	}
	dir := argv[2]
	if st, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil || st.IsDir() {
		return argv
	}
	return append([]string{"go", "-C", dir, "run", "."}, argv[3:]...)
}

// Warm builds a Go program before the run, so that the first start is not
// a compile the schedule's first faults cut short, and a program that does
// not build is said at once. Other programs are left as they are. say,
// when not nil, is told what it is doing while it does it: a first build
// downloads the program's modules, which can take minutes.
func Warm(ctx context.Context, argv []string, say func(string)) error {
	if len(argv) < 2 || argv[0] != "go" {
		return nil
	}
	i := 1
	if argv[1] == "-C" && len(argv) > 3 {
		i = 3
	}
	if argv[i] != "run" {
		return nil
	}
	build := append(append([]string{}, argv[:i]...), "build", "-o", os.DevNull)
	for _, a := range argv[i+1:] {
		build = append(build, a)
		if !strings.HasPrefix(a, "-") {
			break // the package; what follows is the program's own arguments
		}
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, build[0], build[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if say == nil {
		say = func(string) {}
	}
	say(fmt.Sprintf("building your program: %s (a first build downloads its modules)", strings.Join(build, " ")))
	began := time.Now()
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				say(fmt.Sprintf("still building, %s so far", time.Since(began).Round(time.Second)))
			}
		}
	}()
	err := cmd.Run()
	close(done)
	if err == nil {
		say(fmt.Sprintf("built in %s", time.Since(began).Round(100*time.Millisecond)))
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			// The compiler's first lines are the ones to read; the rest is
			// cut, saying so, as a screen or a terminal shows it whole.
			return fmt.Errorf("your program does not build (%s):\n%s", strings.Join(build, " "), plain.Cut(strings.TrimSpace(out.String()), 8<<10))
		}
		return fmt.Errorf("%s: %w", strings.Join(build, " "), err)
	}
	return nil
}

package main

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/catalog"
)

// messageSources are the packages whose messages a command writes to its
// stderr as they are: the commands themselves and what they wire.
var messageSources = []string{".", "../../challenge", "../../labs", "../../steps", "../../internal/room", "../../internal/workshop",
	"../../internal/chaos", "../../internal/bench", "../../internal/cleaner", "../../internal/services", "../../internal/replay",
	"../../internal/broker", "../../internal/amqpproxy", "../../internal/node", "../../internal/dbnode", "../../internal/containers", "../../internal/mutation", "../../internal/password"}

// messages is every English sentence the Go files in dir write as a
// user-facing message: the format of fmt.Errorf, errors.New, a
// lab.Error's What and Fix, a line a command prints to stderr, and a
// lesson's problem (add(line, format, …), Problem{Msg: …}).
func messages(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	return messagesIn(t, files, isStderr, false)
}

// messagesIn is messages of the files named, where sink says which writers
// a line printed to is a message, and every (true) takes every format
// given to fmt.Sprintf or a story's add and every string a function
// returns: a report's words.
func messagesIn(t *testing.T, files []string, sink func(ast.Expr) bool, every bool) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	found := map[string]string{}
	add := func(e ast.Expr) {
		s, ok := literal(e)
		if !ok {
			return
		}
		for _, line := range strings.Split(s, "\n") {
			// As catalog.Writer reads a line: its "lab COMMAND: " is the
			// command, not a sentence.
			line = strings.TrimSpace(line)
			line = line[len(commandHead.FindString(line)):]
			if catalog.Sentence(verbFree(line)) == "" || commandLine.MatchString(line) {
				continue
			}
			if _, seen := found[line]; !seen {
				found[line] = fset.Position(e.Pos()).String()
			}
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				switch name := callee(n); name {
				case "fmt.Errorf", "errors.New":
					if len(n.Args) > 0 {
						add(n.Args[0])
					}
				case "fmt.Fprintf", "fmt.Fprintln", "fmt.Fprint":
					if len(n.Args) > 1 && sink(n.Args[0]) {
						add(n.Args[1])
					}
				case "fmt.Sprintf":
					if every && len(n.Args) > 0 {
						add(n.Args[0])
					}
				case "add": // a lesson's problem: add(line, format, args...)
					if len(n.Args) > 1 {
						add(n.Args[1])
					}
				case "st.add": // a story's line: add(t, format, args...)
					if every && len(n.Args) > 1 {
						add(n.Args[1])
					}
				}
			case *ast.ReturnStmt:
				if every {
					for _, r := range n.Results {
						add(r)
					}
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" {
					for _, el := range n.Elts {
						kv, ok := el.(*ast.KeyValueExpr)
						if !ok {
							continue
						}
						if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "What" || k.Name == "Fix") {
							add(kv.Value)
							if c, ok := kv.Value.(*ast.CallExpr); ok && callee(c) == "fmt.Sprintf" && len(c.Args) > 0 {
								add(c.Args[0])
							}
						}
						// A lesson's problem: Problem{Msg: fmt.Sprintf(format, …)}.
						if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Msg" {
							if c, ok := kv.Value.(*ast.CallExpr); ok && callee(c) == "fmt.Sprintf" && len(c.Args) > 0 {
								add(c.Args[0])
							}
						}
					}
				}
			}
			return true
		})
	}
	return found
}

// literal is a string constant: a literal or literals joined with +.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
		return constant.StringVal(v), true
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok1 := literal(e.X)
		b, ok2 := literal(e.Y)
		return a + b, ok1 && ok2
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}

func callee(c *ast.CallExpr) string {
	if id, ok := c.Fun.(*ast.Ident); ok {
		return id.Name
	}
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	if x, ok := sel.X.(*ast.Ident); ok {
		return x.Name + "." + sel.Sel.Name
	}
	return ""
}

// isStderr is a writer named as a command's error stream.
func isStderr(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "stderr" || e.Name == "errw" || e.Name == "ew"
	case *ast.SelectorExpr:
		return e.Sel.Name == "Stderr" || e.Sel.Name == "stderr"
	}
	return false
}

var (
	commandHead = regexp.MustCompile(`^lab[^:]*: `)
	// commandLine is an example command a message shows (lab …, go run …).
	commandLine = regexp.MustCompile(`^(lab|go|python3|ssh|docker) [^:]*$`)
)

var fmtVerb = regexp.MustCompile(`%(\[\d+\])?[-+# 0-9.]*[a-zA-Z%]`)

// verbFree is a format with its verbs as a value would stand there, so a
// sentence is found in the words and not in a verb's letters.
func verbFree(s string) string { return fmtVerb.ReplaceAllString(s, "'x'") }

// A command's message that is not in the catalog reaches a learner who
// asked for Chinese in English: every sentence the commands' source writes
// must be one of the catalog's formats (or a line of one joined with "\n").
func TestEveryMessageTheCommandsWriteIsInTheCatalog(t *testing.T) {
	var missing []string
	for _, dir := range messageSources {
		for msg, at := range messages(t, dir) {
			if !catalog.Lab().Holds(msg) {
				missing = append(missing, at+": "+strconv.Quote(msg))
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d messages have no place in the catalog (add each with catalog.Add and its zh, and write it with the phrase's F or E):\n%s",
			len(missing), strings.Join(missing, "\n"))
	}
}

// reportSources are the files that write a chaos run's report: what a
// learner reads after lab challenge run (and an instructor after lab
// chaos).
var reportSources = []string{"chaos.go", "challenge.go", "../../internal/chaos/explain.go"}

// A challenge's report in Chinese: every line the report prints (its
// summary, schedule, counts, verdict) and every explanation of an order
// that went wrong is one of the catalog's formats.
func TestEveryLineOfAChaosRunsReportIsInTheCatalog(t *testing.T) {
	toOut := func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && (id.Name == "w" || id.Name == "stdout" || id.Name == "b")
	}
	var missing []string
	for msg, at := range messagesIn(t, reportSources, toOut, true) {
		if !catalog.Lab().Holds(msg) {
			missing = append(missing, at+": "+strconv.Quote(msg))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%d lines of the report have no place in the catalog:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}

// The reader finds a message written with errors.New, fmt.Errorf, a
// lab.Error and to stderr, and passes over code, names and format verbs.
func TestTheMessageReaderFindsEachKindOfMessage(t *testing.T) {
	dir := t.TempDir()
	src := `package x
import ("errors"; "fmt"; "os"; lab "github.com/rmlab/lab")
func f() error {
	fmt.Fprintf(os.Stderr, "the room is full now\n")
	_ = &lab.Error{What: "the seat was not " + "found here", Fix: "` + "`lab serve --seats 4`" + `"}
	_ = fmt.Errorf("%s: %w", "x", nil)
	return errors.New("a wrong key was given")
}`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := messages(t, dir)
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"a wrong key was given", "the room is full now", "the seat was not found here"}
	if strings.Join(keys, "|") != strings.Join(want, "|") {
		t.Errorf("found %q, want %q", keys, want)
	}
}

// The whole table, as the lab binary holds it (every package's phrases):
// each has its Chinese, which takes the English's arguments.
func TestEveryPhraseTheLabHoldsHasItsChineseWithTheSameArguments(t *testing.T) {
	if probs := catalog.Lab().Check("zh"); len(probs) > 0 {
		t.Errorf("%d faults in the catalog:\n%s", len(probs), strings.Join(probs, "\n"))
	}
}

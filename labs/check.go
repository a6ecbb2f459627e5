package labs

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	lab "github.com/rmlab/lab"
	labsql "github.com/rmlab/lab/sql"
	"github.com/rmlab/lab/steps"
)

// Problem is one mistake in a lesson file: where, and what to do about it.
type Problem struct {
	File string
	Line int
	Msg  string // what is wrong — and the fix
}

func (p Problem) Error() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg) }

// Problems are every mistake found in one lesson file, in line order: an
// instructor fixes them all after one run, not one per run.
type Problems []error

func (ps Problems) Error() string { return lines(ps) }

// lines joins errors one per line.
func lines(errs []error) string {
	s := make([]string, len(errs))
	for i, e := range errs {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

func (ps Problems) Unwrap() []error { return ps }

// IsLesson is the rule for what in a lessons folder is a lesson: a Markdown
// file with a ```lesson block. Notes, reports and READMEs beside the lessons
// are skipped, never errors.
func IsLesson(src []byte) bool {
	return lessonFenceRe.Match(src)
}

var lessonFenceRe = regexp.MustCompile("(?m)^ {0,3}(```+|~~~+)\\s*lesson\\s*$")

// proseLangs are code-block languages that are prose; a block whose word is
// near a step kind but is one of these is not a typo.
var proseLangs = map[string]bool{"text": true, "txt": true, "go": true, "json": true, "bash": true, "sh": true,
	"shell": true, "console": true, "yaml": true, "yml": true, "diff": true, "markdown": true, "md": true,
	"plain": true, "python": true, "java": true, "js": true, "ts": true, "xml": true, "toml": true, "ini": true,
	"mysql": true, "sqlite": true, "erlang": true, "http-response": true}

// kindTypo is the problem of a fenced block whose word is not a step kind
// but is near one: taken as prose, it would pass silently.
func kindTypo(kind string) string {
	if kind == "" || proseLangs[strings.ToLower(kind)] {
		return ""
	}
	sug := steps.Suggest(kind, steps.KindNames())
	if sug == "" {
		return ""
	}
	return fmt.Sprintf("```%s is not a step kind%s, so the block would be shown as prose and never run — fix the kind, or give a prose block a language such as text", kind, sug)
}

// swallowed finds, in the body of a fenced block, a line that opens another
// fenced block (the same fence with a word after it): the block's closing
// fence is missing, and it swallowed what followed. It returns the 0-based
// body line, or -1.
func swallowed(src []byte, start int, body string) int {
	line := src[start:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimLeft(line, " ")
	n := 0
	for n < len(line) && (line[n] == '`' || line[n] == '~') && line[n] == line[0] {
		n++
	}
	if n == 0 {
		return -1
	}
	marker := string(line[:n])
	for i, l := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimLeft(l, " "), marker)
		if ok && strings.TrimSpace(rest) != "" && rest[0] != marker[0] {
			return i
		}
	}
	return -1
}

var anyVarRe = regexp.MustCompile(`\$\{([^}]*)\}`)

// lint checks what only the whole lesson can tell: names a step uses that
// another step or the lab must define.
func lint(l *lab.Lesson, add func(line int, format string, args ...any)) {
	choices := steps.Choices(l)
	var choiceNames []string
	for n := range choices {
		choiceNames = append(choiceNames, n)
	}
	known := append(append([]string{}, choiceNames...), steps.BuiltinVars...)

	created := map[string][]string{} // the lesson's own CREATE TABLEs, by database
	for _, s := range l.Steps() {
		if s.Kind == "sql" {
			body := s.Body
			if f := s.Attrs["file"]; f != "" {
				body, _ = labsql.File(f)
			}
			db := s.Attrs["db"]
			if db == "" && len(l.Tables) > 0 {
				db = l.Tables[0].DB
			}
			created[db] = append(created[db], labsql.CreatedTables(body)...)
		}
	}
	for _, t := range l.Tables {
		if !slices.Contains(labsql.Databases(), t.DB) {
			add(t.Line, "table: database %s is not one of the article's%s; use %s", t.DB,
				steps.Suggest(t.DB, labsql.Databases()), strings.Join(labsql.Databases(), " or "))
		} else if tables := append(labsql.Tables(t.DB), created[t.DB]...); !slices.Contains(tables, t.Title) {
			add(t.Line, "table: %s has no table %s%s; its tables are %s (and those the lesson's own sql steps create)", t.DB, t.Title,
				steps.Suggest(t.Title, tables), strings.Join(tables, ", "))
		}
	}

	spawned := map[string]string{} // worker name → program
	declared := map[string]bool{}  // queues a declare step before declares
	var unsafe, safe bool
	for _, s := range l.Steps() {
		texts := []string{s.Body}
		for k, v := range s.Attrs {
			if k != "label" {
				texts = append(texts, v)
			}
		}
		for _, t := range texts {
			for _, m := range anyVarRe.FindAllStringSubmatch(t, -1) {
				sub := steps.VarRe.FindStringSubmatch(m[0])
				switch {
				case sub == nil:
					add(s.Line, "%s is not a variable: write ${choice-name} (lowercase) or ${name:SECONDS}", m[0])
				case sub[2] != "":
					// ${lease:30}: seconds, shortened in replay
				case !slices.Contains(known, sub[1]):
					what := "no choice of this lesson is named " + sub[1]
					if len(choiceNames) == 0 {
						what = "this lesson has no choice step"
					}
					add(s.Line, "${%s} would be sent as it is: %s%s; the names it can use are %s", sub[1], what,
						steps.Suggest(sub[1], known), strings.Join(known, ", "))
				}
			}
		}
		switch s.Kind {
		case "spawn":
			lintSpawnFlags(s, choices, add)
			prog := s.Attrs["program"]
			for _, n := range expansions(s.Attrs["name"], choices) {
				spawned[n] = prog
			}
			for _, pt := range splitListVars(s.Attrs["pause-at"], choices) {
				if points := steps.Programs[prog]; !slices.Contains(points, pt) {
					add(s.Line, "spawn pause-at=%s: %s never pauses there%s; its points are %s (lab worker %s --help)",
						pt, prog, steps.Suggest(pt, points), strings.Join(points, ", "), prog)
				}
			}
		case "wait", "kill", "resume", "stop":
		workers:
			for _, w := range expansions(s.Attrs["worker"], choices) {
				prog, ok := spawned[w]
				if !ok {
					var names []string
					for n := range spawned {
						names = append(names, n)
					}
					slices.Sort(names)
					hint := "no spawn step before it starts a worker"
					if len(names) > 0 {
						hint = "the workers spawned before it are " + strings.Join(names, ", ")
					}
					add(s.Line, "%s worker=%s: no earlier spawn step starts a worker named %s%s; %s", s.Kind, w, w,
						steps.Suggest(w, names), hint)
					break workers
				}
				if s.Kind != "wait" {
					continue
				}
				for _, u := range expansions(s.Attrs["until"], choices) {
					if points := steps.Programs[prog]; u != "" && u != "exit" && !slices.Contains(points, u) {
						add(s.Line, "wait until=%s: %s (a %s) never reaches that point%s; its points are %s, or until=exit",
							u, w, prog, steps.Suggest(u, points), strings.Join(points, ", "))
					}
				}
			}
		case "declare":
			for _, line := range strings.Split(s.Body, "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "queue" {
					for _, q := range expansions(f[1], choices) {
						declared[q] = true
					}
				}
			}
		case "broker-restart":
			// "QUEUE gone" holds for a queue that never existed: the lesson
			// must have declared it for its vanishing to mean anything.
			for i, line := range strings.Split(s.Body, "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[1] == "gone" {
					for _, q := range expansions(f[0], choices) {
						if !declared[q] {
							names := slices.Sorted(maps.Keys(declared))
							add(s.Line+1+i, "%s gone: no declare step before this one declares queue %s%s, so its absence after the restart would show nothing; declare it first", q, q, steps.Suggest(q, names))
						}
					}
				}
			}
		case "expect":
			lintExpect(l, s, add)
		case "ledger":
			unsafe = unsafe || s.Attrs["variant"] == "unsafe"
			safe = safe || s.Attrs["variant"] == "safe"
		}
	}
	lintNeeds(l, add)
	lintPredicts(l, add)
	lintTopology(l, add)
	lintHeaders(l, add)
	if !l.ExplainOnly && (!unsafe || !safe) {
		missing := "variant=safe"
		if !unsafe {
			missing = "variant=unsafe"
			if !safe {
				missing = "variant=unsafe and a ledger variant=safe"
			}
		}
		add(l.Line, "lesson %s has no ledger %s: every lesson that runs ends with the unsafe and the safe ledger, side by side", l.ID, missing)
	}
}

// lintPredicts refuses a lesson whose every predict (two or more) has the
// article's answer as its first option: a learner who learns the pattern
// predicts nothing.
func lintPredicts(l *lab.Lesson, add func(line int, format string, args ...any)) {
	n, first := 0, 0
	for _, s := range l.Steps() {
		if s.Kind != "predict" {
			continue
		}
		n++
		if opts := steps.Options(s); len(opts) > 0 && opts[0].Name == s.Attrs["answer"] {
			first++
		}
	}
	if n >= 2 && first == n {
		add(l.Line, "every predict of lesson %s has its answer as the first option: put some answers elsewhere, or the order gives them away", l.ID)
	}
}

// lintNeeds wants a lesson to declare what its steps skip without: a skip
// is never a pass, so lab doctor must be able to say before a replay which
// lessons cannot check everything here.
func lintNeeds(l *lab.Lesson, add func(line int, format string, args ...any)) {
	needs := func(any ...lab.Capability) bool {
		for _, n := range l.Needs {
			for _, a := range n.Alternatives() {
				if slices.Contains(any, a) {
					return true
				}
			}
		}
		return false
	}
	for _, s := range l.Steps() {
		switch {
		case s.Kind == "broker-restart" && !needs(lab.CapOwnBroker, lab.CapBrokerControl):
			add(s.Line, "broker-restart is skipped where the lab has no node of its own and no broker control: add needs: own-broker|broker-control (or the one the lesson must have) to the lesson block, so lab doctor and replay say so instead of passing")
			return
		case s.Kind == "nodes" && s.Attrs["start"] == "" && !needs(lab.CapOwnBroker):
			add(s.Line, "nodes steps other than start are skipped where the lab cannot start nodes of its own: add needs: own-broker to the lesson block")
			return
		}
	}
}

// lintExpect refuses a verb on a step whose outcome does not carry what it
// reads: "affected 0" after a publish, "rows 0" after a declare. The step
// checked is of=SOURCE's, or the nearest one before that leaves an outcome;
// on each path of the lesson's choices.
func lintExpect(l *lab.Lesson, e *lab.Step, add func(line int, format string, args ...any)) {
	var kinds []string
	if of := e.Attrs["of"]; of != "" {
		k := steps.OutcomeKind(of)
		if k == "" {
			add(e.Line, "expect of=%q: no step leaves an outcome named so; write of=\"sql NAME\", \"worker NAME\", \"publish CHANNEL\", \"consume CHANNEL\", …", of)
			return
		}
		kinds = []string{k}
	} else {
		all := l.Steps()
		at := slices.Index(all, e)
		for _, path := range steps.Paths(l) {
			run := &steps.Run{Choices: path}
			if !run.Applies(e) {
				continue
			}
			for i := at - 1; i >= 0; i-- {
				if s := all[i]; steps.Leaves(s.Kind) && run.Applies(s) {
					if !slices.Contains(kinds, s.Kind) {
						kinds = append(kinds, s.Kind)
					}
					break
				}
			}
		}
	}
	for i, line := range strings.Split(e.Body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, arg, _ := strings.Cut(strings.TrimPrefix(line, "not "), " ")
		for _, k := range kinds {
			if err := steps.Fits(verb, arg, k); err != nil {
				add(e.Line+1+i, "%s: %v", line, err)
				break
			}
		}
	}
}

// expansions is s with each ${choice} replaced by each of its options: a
// name or point written with a choice is checked along every path.
func expansions(s string, choices map[string][]steps.Option) []string {
	m := steps.VarRe.FindStringSubmatch(s)
	if m == nil || m[2] != "" {
		return []string{s}
	}
	opts, ok := choices[m[1]]
	if !ok {
		return []string{s} // an unknown ${name}: reported on its own
	}
	var out []string
	for _, o := range opts {
		out = append(out, expansions(strings.Replace(s, m[0], o.Name, 1), choices)...)
	}
	return out
}

// splitListVars splits a comma-separated value and expands each item.
func splitListVars(v string, choices map[string][]steps.Option) []string {
	var out []string
	for _, x := range steps.SplitList(v) {
		out = append(out, expansions(x, choices)...)
	}
	return out
}

// SameSteps compares a translation with the lesson it translates: every
// step that runs must be identical (only prose, titles, label=, prompt= and
// a menu's descriptions differ). It returns the first difference, or nil.
func SameSteps(en, tr *lab.Lesson) error {
	a, b := en.Steps(), tr.Steps()
	for i := 0; i < len(a) && i < len(b); i++ {
		if what := StepDiff(a[i], b[i]); what != "" {
			return fmt.Errorf("%s: step %d (%s) differs from the English one at %s (%s): %s; a translation changes only prose, titles, label= and prompt=",
				b[i].Where(), i+1, b[i].Kind, a[i].Where(), a[i].Kind, what)
		}
	}
	if len(a) != len(b) {
		return Problem{File: tr.File, Line: tr.Line, Msg: fmt.Sprintf("%d steps, but %s has %d: a translation has the same steps", len(b), en.File, len(a))}
	}
	if !slices.Equal(en.Needs, tr.Needs) || !slices.Equal(en.Queues, tr.Queues) || en.Number != tr.Number || en.Part != tr.Part {
		return Problem{File: tr.File, Line: tr.Line, Msg: fmt.Sprintf("the lesson block's number, part, needs or queue differ from %s's", en.File)}
	}
	return nil
}

// StepDiff says what differs between an English step and its translation
// in what runs ("" when nothing): the kind, an attribute, a body line.
func StepDiff(en, tr *lab.Step) string {
	if en.Kind != tr.Kind {
		return fmt.Sprintf("the kind is %s, the English %s", tr.Kind, en.Kind)
	}
	ea, ta := runAttrs(en), runAttrs(tr)
	keys := slices.Sorted(maps.Keys(ea))
	for k := range ta {
		if _, ok := ea[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		ev, eok := ea[k]
		tv, tok := ta[k]
		switch {
		case !tok:
			return fmt.Sprintf("%s=%q is missing", k, ev)
		case !eok:
			return fmt.Sprintf("%s=%q is not in the English step", k, tv)
		case ev != tv:
			return fmt.Sprintf("%s=%q, the English %s=%q", k, tv, k, ev)
		}
	}
	eb, tb := strings.Split(runBody(en), "\n"), strings.Split(runBody(tr), "\n")
	for j := 0; j < len(eb) || j < len(tb); j++ {
		var el, tl string
		if j < len(eb) {
			el = eb[j]
		}
		if j < len(tb) {
			tl = tb[j]
		}
		if el != tl {
			return fmt.Sprintf("body line %d is %q, the English %q", j+1, tl, el)
		}
	}
	return ""
}

// Display text (label=, prompt=, a choice's or predict's descriptions) is
// written in each language; everything that runs must be identical.
func runAttrs(s *lab.Step) map[string]string {
	out := map[string]string{}
	for k, v := range s.Attrs {
		if k != "label" && k != "prompt" {
			out[k] = v
		}
	}
	return out
}

func runBody(s *lab.Step) string {
	if s.Kind != "choice" && s.Kind != "predict" && s.Kind != "server" {
		return s.Body
	}
	var names []string
	for _, o := range steps.Options(s) {
		names = append(names, o.Name)
	}
	return strings.Join(names, ",")
}

// Report is what `lab check` found in the files and folders it was given.
type Report struct {
	Lessons  int      // lessons that load cleanly
	Problems []error  // every problem, each `file:line: what — fix`
	Skipped  []string // Markdown files that are not lessons (no ```lesson block)
}

// Check loads lesson files and folders as the screen and replay load them,
// with every check, and reports every problem; no path means the built-in
// lessons. A folder is checked in each language it holds (DIR/en, DIR/zh,
// or its top-level files), translations against the English lessons.
func Check(paths ...string) Report {
	var r Report
	// What only an author is told (the lesson still loads and runs): a
	// check that cannot fail.
	authoring := func(ls ...*lab.Lesson) {
		for _, l := range ls {
			lintConstant(l, func(line int, format string, args ...any) {
				r.Problems = append(r.Problems, Problem{File: l.File, Line: line, Msg: fmt.Sprintf(format, args...)})
			})
		}
	}
	add := func(ls []*lab.Lesson, err error) {
		r.Lessons += len(ls)
		authoring(ls...)
		var fe FileErrors
		switch {
		case errors.As(err, &fe):
			for _, e := range fe {
				var ps Problems
				if errors.As(e, &ps) {
					r.Problems = append(r.Problems, ps...)
				} else {
					r.Problems = append(r.Problems, e)
				}
			}
		case err != nil:
			r.Problems = append(r.Problems, err)
		}
	}
	if len(paths) == 0 {
		for _, lang := range Langs {
			add(Builtin(lang))
		}
		return r
	}
	for _, p := range paths {
		if !isDir(p) {
			l, err := LoadFile(p)
			var ps Problems
			if errors.As(err, &ps) {
				r.Problems = append(r.Problems, ps...)
			} else if err != nil {
				r.Problems = append(r.Problems, err)
			} else if l != nil {
				r.Lessons++
				authoring(l)
			}
			continue
		}
		langs := []string{}
		for _, lang := range Langs {
			if isDir(filepath.Join(p, lang)) {
				langs = append(langs, lang)
				r.Skipped = append(r.Skipped, notLessons(filepath.Join(p, lang))...)
			}
		}
		if len(langs) == 0 || !isDir(filepath.Join(p, "en")) {
			// Top-level files are the folder's own (English) lessons.
			add(LoadFS(os.DirFS(p), ".", p))
			r.Skipped = append(r.Skipped, notLessons(p)...)
		}
		for _, lang := range langs {
			add(LoadDir(p, lang))
		}
	}
	return r
}

// notLessons lists the Markdown files in dir that are not lessons.
func notLessons(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && !IsLesson(b) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

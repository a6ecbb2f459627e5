// Package labs holds the lessons, written as Markdown in English (en/) and
// Simplified Chinese (zh/), and the loader that turns a Markdown file into a
// lab.Lesson: fenced blocks whose info string names a step kind are steps,
// everything else is prose.
package labs

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/steps"
)

//go:embed en/*.md zh/*.md
var builtin embed.FS

// Langs are the languages every built-in lesson is written in.
var Langs = []string{"en", "zh"}

// Builtin loads the lessons shipped in the binary, in one language; a
// translation is checked against the English lesson. They are parsed once
// per process (a workshop server opens a screen per participant) and
// shared: callers read lessons, never change them.
func Builtin(lang string) ([]*lab.Lesson, error) {
	builtinMu.Lock()
	defer builtinMu.Unlock()
	if c, ok := builtinCache[lang]; ok {
		return append([]*lab.Lesson(nil), c.ls...), c.err
	}
	ls, err := loadBuiltin(lang)
	builtinCache[lang] = builtinLoad{ls, err}
	return append([]*lab.Lesson(nil), ls...), err
}

type builtinLoad struct {
	ls  []*lab.Lesson
	err error
}

var (
	builtinMu    sync.Mutex
	builtinCache = map[string]builtinLoad{}
)

func loadBuiltin(lang string) ([]*lab.Lesson, error) {
	ls, err := LoadFS(builtin, lang, "labs/"+lang)
	if lang == "en" {
		return ls, err
	}
	en, _ := LoadFS(builtin, "en", "labs/en")
	return sameAsEnglish(ls, en, err)
}

// LoadDir loads lessons from a directory of an instructor's: DIR/LANG/*.md
// when that exists, else DIR/*.md (the folder's own language). A Chinese
// lesson is checked against the English one of the same id (DIR/en/ or the
// top-level files), and left out when its steps differ.
func LoadDir(dir, lang string) ([]*lab.Lesson, error) {
	fsys := os.DirFS(dir)
	if !isDir(filepath.Join(dir, lang)) {
		return LoadFS(fsys, ".", dir)
	}
	ls, err := LoadFS(fsys, lang, filepath.Join(dir, lang))
	if lang == "en" {
		return ls, err
	}
	var en []*lab.Lesson
	if isDir(filepath.Join(dir, "en")) {
		en, _ = LoadFS(fsys, "en", filepath.Join(dir, "en"))
	} else {
		en, _ = LoadFS(fsys, ".", dir)
	}
	return sameAsEnglish(ls, en, err)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// sameAsEnglish leaves out a translation whose steps differ from its
// English lesson's, with the first difference, beside the load's errors.
func sameAsEnglish(tr, en []*lab.Lesson, loadErr error) ([]*lab.Lesson, error) {
	bad := partial(loadErr)
	if loadErr != nil && bad == nil {
		return tr, loadErr
	}
	var out []*lab.Lesson
	for _, l := range tr {
		if e := Find(en, l.ID); e != nil {
			if err := SameSteps(e, l); err != nil {
				bad = append(bad, err)
				continue
			}
		}
		out = append(out, l)
	}
	if len(bad) > 0 {
		return out, bad
	}
	return out, nil
}

func partial(err error) FileErrors {
	var fe FileErrors
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}

// LoadFS loads every lesson in dir of fsys: each *.md with a ```lesson
// block (IsLesson); other Markdown files (a README, notes) are skipped. shown
// is the path used in messages. A file with problems, or repeating another's
// id or number, is left out and named in the error, a FileErrors with one
// entry per file (each `file:line: problem` lines): one broken file in an
// instructor's directory must not hide the lessons that are fine. Callers
// decide what a partial load means (the screen shows the rest, replay --all
// fails).
func LoadFS(fsys fs.FS, dir, shown string) ([]*lab.Lesson, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read lessons from %s: %w", shown, err)
	}
	var out []*lab.Lesson
	var bad []error
	ids := map[string]*lab.Lesson{}
	nums := map[int]*lab.Lesson{}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		file := filepath.Join(shown, e.Name())
		b, err := fs.ReadFile(fsys, pathJoin(dir, e.Name()))
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %w", file, err))
			continue
		}
		if !IsLesson(b) {
			continue
		}
		l, err := Parse(file, b)
		if err != nil {
			bad = append(bad, err) // all of the file's problems, one per line
			continue
		}
		if l.Lang == "" && (dir == "en" || dir == "zh") {
			l.Lang = dir
		}
		if prev, ok := ids[l.ID]; ok {
			bad = append(bad, Problem{File: file, Line: l.Line, Msg: fmt.Sprintf("lesson id %s is also used by %s:%d; left out — give one of them another id", l.ID, prev.File, prev.Line)})
			continue
		}
		if prev, ok := nums[l.Number]; ok {
			bad = append(bad, Problem{File: file, Line: l.Line, Msg: fmt.Sprintf("lesson number %d is also used by %s:%d; left out — give one of them another number", l.Number, prev.File, prev.Line)})
			continue
		}
		ids[l.ID], nums[l.Number] = l, l
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	if len(bad) > 0 {
		return out, FileErrors(bad)
	}
	return out, nil
}

// FileErrors are the lesson files a load left out, one `file:line: problem`
// each; the lessons that loaded come back beside it.
type FileErrors []error

func (e FileErrors) Error() string { return lines(e) }

func (e FileErrors) Unwrap() []error { return e }

func pathJoin(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}

// LoadFile loads one lesson file (`lab replay path/to/lesson.md`).
func LoadFile(path string) (*lab.Lesson, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &lab.Error{What: "cannot read lesson file", Where: path, Err: err}
	}
	return Parse(path, b)
}

var idRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Parse turns one Markdown file into a lesson. Every problem is reported,
// not only the first, each as file:line, what is wrong and the fix
// (Problems); a file with any problem gives no lesson.
func Parse(file string, src []byte) (*lab.Lesson, error) {
	md := goldmark.New()
	doc := md.Parser().Parse(text.NewReader(src))
	l := &lab.Lesson{File: file}
	var probs Problems
	add := func(line int, format string, args ...any) {
		probs = append(probs, Problem{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	var haveMeta bool
	prose := 0 // start of the prose not yet emitted
	lineOf := func(off int) int { return bytes.Count(src[:off], []byte("\n")) + 1 }
	emitProse := func(end int) {
		if p := strings.TrimSpace(string(src[prose:end])); p != "" {
			l.Blocks = append(l.Blocks, lab.Block{Prose: p})
		}
	}
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		if h, ok := n.(*ast.Heading); ok && h.Level == 1 && l.Title == "" {
			l.Title = strings.TrimSpace(string(h.Lines().Value(src)))
		}
		fb, ok := n.(*ast.FencedCodeBlock)
		if !ok || fb.Info == nil {
			continue
		}
		info := strings.TrimSpace(string(fb.Info.Segment.Value(src)))
		kind, rest, _ := strings.Cut(info, " ")
		start, end := fenceRange(src, fb)
		line := lineOf(start)
		body := string(fb.Lines().Value(src))
		if i := swallowed(src, start, body); i >= 0 {
			add(line+1+i, "a fence opens here inside the %s block that starts at line %d: that block's closing fence is missing, so it swallowed what follows — close it before this line", info, line)
		}
		if kind == "lesson" {
			if haveMeta {
				add(line, "a second lesson block; a lesson has one — delete this one or move it to its own file")
				continue
			}
			haveMeta = true
			l.Line = line
			parseMeta(l, file, line, body, add)
			emitProse(start)
			prose = end
			continue
		}
		k, isStep := steps.Lookup(kind)
		if !isStep {
			if msg := kindTypo(kind); msg != "" {
				add(line, "%s", msg)
			}
			continue // an ordinary code block: prose
		}
		attrs, err := ParseAttrs(rest)
		if err != nil {
			add(line, "%s block: %v", kind, err)
			continue
		}
		st := &lab.Step{Kind: kind, Attrs: attrs, Body: body, File: file, Line: line}
		if err := k.Check(st); err != nil {
			probs = append(probs, err)
			continue
		}
		emitProse(start)
		prose = end
		st.Index = len(l.Steps())
		l.Blocks = append(l.Blocks, lab.Block{Step: st})
	}
	emitProse(len(src))
	if !haveMeta {
		add(1, "no ```lesson block (it gives id:, number: and part:); a Markdown file without one is not a lesson and is skipped in a folder")
	}
	if l.Title == "" {
		add(1, "no title: start the lesson with a # heading")
	}
	if haveMeta && !l.ExplainOnly && len(l.Steps()) == 0 && len(probs) == 0 {
		add(l.Line, "lesson %s has no steps; mark it explain-only: true if nothing runs", l.ID)
	}
	checkChoices(l, &probs)
	if haveMeta {
		lint(l, add)
	}
	if len(probs) > 0 {
		slices.SortStableFunc(probs, func(a, b error) int { return lineOfErr(a) - lineOfErr(b) })
		return nil, probs
	}
	return l, nil
}

var errLineRe = regexp.MustCompile(`^[^:]*:(\d+):`)

// lineOfErr is the line a `file:line: ...` error names, for sorting.
func lineOfErr(err error) int {
	if p, ok := err.(Problem); ok {
		return p.Line
	}
	if m := errLineRe.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// fenceRange is the byte range from the opening fence's line start to the
// end of the closing fence's line.
func fenceRange(src []byte, fb *ast.FencedCodeBlock) (int, int) {
	start := fb.Info.Segment.Start
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	// Content lines keep their newline, so the closing fence starts where the
	// last content line stops (or on the line after the opening fence).
	var after int
	if n := fb.Lines().Len(); n > 0 {
		after = fb.Lines().At(n - 1).Stop
	} else if i := bytes.IndexByte(src[fb.Info.Segment.Stop:], '\n'); i >= 0 {
		after = fb.Info.Segment.Stop + i + 1
	} else {
		return start, len(src)
	}
	if after >= len(src) {
		return start, len(src)
	}
	if i := bytes.IndexByte(src[after:], '\n'); i >= 0 {
		return start, after + i + 1
	}
	return start, len(src)
}

func parseMeta(l *lab.Lesson, file string, line int, body string, add func(int, string, ...any)) {
	for i, raw := range strings.Split(body, "\n") {
		s := strings.TrimSpace(raw)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		at := line + 1 + i
		k, v, ok := strings.Cut(s, ":")
		if !ok {
			add(at, "lesson block line %q: write key: value", s)
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if c := strings.Index(v, " #"); c >= 0 {
			v = strings.TrimSpace(v[:c]) // a trailing comment, as in labs/README.md
		}
		switch k {
		case "id":
			if !idRe.MatchString(v) {
				add(at, "id %q: use lowercase words joined by -", v)
			}
			l.ID = v
		case "number":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				add(at, "number %q is not a positive whole number", v)
			}
			l.Number = n
		case "part":
			switch lab.Part(v) {
			case lab.PartIdempotency, lab.PartBroker, lab.PartOutbox:
				l.Part = lab.Part(v)
			default:
				add(at, "part %q: use idempotency, broker or outbox%s", v, steps.Suggest(v, []string{"idempotency", "broker", "outbox"}))
			}
		case "lang":
			l.Lang = v
		case "explain-only":
			l.ExplainOnly = v == "true" || v == "yes"
		case "needs":
			for _, c := range strings.Split(v, ",") {
				if c = strings.TrimSpace(c); c != "" {
					l.Needs = append(l.Needs, lab.Capability(c))
					for _, a := range lab.Capability(c).Alternatives() {
						if !slices.Contains(lab.Capabilities, a) {
							var all []string
							for _, k := range lab.Capabilities {
								all = append(all, string(k))
							}
							add(at, "needs: %s is not a capability%s; use %s, or A|B when either will do (lab doctor lists what the servers offer)",
								a, steps.Suggest(string(a), all), strings.Join(all, ", "))
						}
					}
				}
			}
		case "table":
			// table: DB TABLE [| QUERY]
			spec, q, _ := strings.Cut(v, "|")
			f := strings.Fields(spec)
			if len(f) != 2 {
				add(at, "table: write DB TABLE, optionally | QUERY")
				continue
			}
			q = strings.TrimSpace(q)
			if q == "" {
				q = "SELECT * FROM " + f[1]
			}
			l.Tables = append(l.Tables, lab.TableView{Title: f[1], DB: f[0], Query: q, Line: at})
		case "queue":
			for _, q := range strings.Split(v, ",") {
				if q = strings.TrimSpace(q); q != "" {
					l.Queues = append(l.Queues, q)
				}
			}
		default:
			keys := []string{"id", "number", "part", "lang", "needs", "table", "queue", "explain-only"}
			add(at, "unknown lesson key %q%s; the keys are %s", k, steps.Suggest(k, keys), strings.Join(keys, ", "))
		}
	}
	switch {
	case l.ID == "":
		add(line, "lesson block has no id:")
	case l.Number == 0:
		add(line, "lesson block has no number:")
	case l.Part == "":
		add(line, "lesson block has no part:")
	}
}

func checkChoices(l *lab.Lesson, probs *Problems) {
	opts := steps.Choices(l)
	// A paragraph of one path says so as a step does: checked the same way.
	var conds []*lab.Step
	for _, b := range l.Blocks {
		if b.Step != nil {
			conds = append(conds, b.Step)
			continue
		}
		for _, para := range strings.Split(b.Prose, "\n\n") {
			if w, _ := lab.PathOf(para); w != "" {
				conds = append(conds, &lab.Step{Kind: "paragraph", File: l.File, Line: l.Line, Attrs: map[string]string{"when": w}})
			}
		}
	}
	for _, s := range conds {
		w, ok := s.Attrs["when"]
		if !ok {
			continue
		}
		name, list, _ := strings.Cut(w, ":")
		choice, ok := opts[name]
		if !ok {
			var names []string
			for n := range opts {
				names = append(names, n)
			}
			*probs = append(*probs, fmt.Errorf("%s: when=%s names no choice step of this lesson%s", s.Where(), w, steps.Suggest(name, names)))
			continue
		}
		for _, o := range strings.Split(list, ",") {
			var names []string
			for _, c := range choice {
				names = append(names, c.Name)
			}
			if !slices.Contains(names, o) {
				*probs = append(*probs, fmt.Errorf("%s: when=%s: %q is not an option of choice %s%s; its options are %s", s.Where(), w, o, name,
					steps.Suggest(o, names), strings.Join(names, ", ")))
			}
		}
	}
}

// ParseAttrs reads key=value words; a value may be "double quoted"; a bare
// word is key with an empty value (e.g. blocks).
func ParseAttrs(s string) (map[string]string, error) {
	out := map[string]string{}
	s = strings.TrimSpace(s)
	for s != "" {
		i := strings.IndexAny(s, "= ")
		if i < 0 {
			out[s] = ""
			break
		}
		key := s[:i]
		if key == "" {
			return nil, fmt.Errorf("attribute with no name near %q", s)
		}
		if s[i] == ' ' {
			out[key] = ""
			s = strings.TrimSpace(s[i:])
			continue
		}
		s = s[i+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			j := strings.Index(s[1:], `"`)
			if j < 0 {
				return nil, fmt.Errorf("unclosed quote in %s=", key)
			}
			val, s = s[1:j+1], s[j+2:]
		} else {
			j := strings.IndexByte(s, ' ')
			if j < 0 {
				j = len(s)
			}
			val, s = s[:j], s[j:]
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("attribute %s given twice", key)
		}
		out[key] = val
		s = strings.TrimSpace(s)
	}
	return out, nil
}

// Find returns the lesson with id in lessons, or with that number (`lab
// list` leads with numbers, and people type them).
func Find(lessons []*lab.Lesson, id string) *lab.Lesson {
	n, err := strconv.Atoi(id)
	for _, l := range lessons {
		if l.ID == id || err == nil && l.Number == n {
			return l
		}
	}
	return nil
}

// Package labs holds the lessons, written as Markdown in English (en/) and
// Simplified Chinese (zh/), and the loader that turns a Markdown file into a
// lab.Lesson: fenced blocks whose info string names a step kind are steps,
// everything else is prose.
package labs

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

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

// Builtin loads the lessons shipped in the binary, in one language.
func Builtin(lang string) ([]*lab.Lesson, error) {
	return LoadFS(builtin, lang, "labs/"+lang)
}

// LoadDir loads lessons from a directory of an instructor's: DIR/LANG/*.md
// when that exists, else DIR/*.md.
func LoadDir(dir, lang string) ([]*lab.Lesson, error) {
	fsys := os.DirFS(dir)
	if st, err := os.Stat(filepath.Join(dir, lang)); err == nil && st.IsDir() {
		return LoadFS(fsys, lang, filepath.Join(dir, lang))
	}
	return LoadFS(fsys, ".", dir)
}

// LoadFS loads every *.md in dir of fsys (README.md excepted). shown is the
// path used in messages. A file that does not parse, or repeats another's id
// or number, is left out and named in the error, which joins one
// `file:line: problem` per bad file: one broken file in an instructor's
// directory must not hide the lessons that are fine. Callers decide what a
// partial load means (the screen shows the rest, replay --all fails).
func LoadFS(fsys fs.FS, dir, shown string) ([]*lab.Lesson, error) {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read lessons from %s: %w", shown, err)
	}
	var out []*lab.Lesson
	var bad []error
	ids := map[string]string{}
	nums := map[int]string{}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") || strings.EqualFold(e.Name(), "README.md") {
			continue
		}
		file := filepath.Join(shown, e.Name())
		b, err := fs.ReadFile(fsys, pathJoin(dir, e.Name()))
		if err != nil {
			bad = append(bad, fmt.Errorf("%s: %w", file, err))
			continue
		}
		l, err := Parse(file, b)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		if l.Lang == "" && (dir == "en" || dir == "zh") {
			l.Lang = dir
		}
		if prev, ok := ids[l.ID]; ok {
			bad = append(bad, fmt.Errorf("%s: lesson id %s is also used by %s; left out", file, l.ID, prev))
			continue
		}
		if prev, ok := nums[l.Number]; ok {
			bad = append(bad, fmt.Errorf("%s: lesson number %d is also used by %s; left out", file, l.Number, prev))
			continue
		}
		ids[l.ID], nums[l.Number] = file, file
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

func (e FileErrors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "\n")
}

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

// Parse turns one Markdown file into a lesson. Every problem is reported as
// file:line and what is wrong.
func Parse(file string, src []byte) (*lab.Lesson, error) {
	md := goldmark.New()
	doc := md.Parser().Parse(text.NewReader(src))
	l := &lab.Lesson{File: file}
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
		if kind == "lesson" {
			if haveMeta {
				return nil, fmt.Errorf("%s:%d: a second lesson block; a lesson has one", file, line)
			}
			haveMeta = true
			if err := parseMeta(l, file, line, body); err != nil {
				return nil, err
			}
			emitProse(start)
			prose = end
			continue
		}
		k, isStep := steps.Lookup(kind)
		if !isStep {
			continue // an ordinary code block: prose
		}
		attrs, err := ParseAttrs(rest)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s block: %v", file, line, kind, err)
		}
		st := &lab.Step{Kind: kind, Attrs: attrs, Body: body, File: file, Line: line}
		if err := k.Check(st); err != nil {
			return nil, err
		}
		emitProse(start)
		prose = end
		st.Index = len(l.Steps())
		l.Blocks = append(l.Blocks, lab.Block{Step: st})
	}
	emitProse(len(src))
	if !haveMeta {
		return nil, fmt.Errorf("%s:1: no ```lesson block (it gives id:, number: and part:)", file)
	}
	if l.Title == "" {
		return nil, fmt.Errorf("%s:1: no title: start the lesson with a # heading", file)
	}
	if !l.ExplainOnly && len(l.Steps()) == 0 {
		return nil, fmt.Errorf("%s:1: lesson %s has no steps; mark it explain-only: true if nothing runs", file, l.ID)
	}
	if err := checkChoices(l); err != nil {
		return nil, err
	}
	return l, nil
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

func parseMeta(l *lab.Lesson, file string, line int, body string) error {
	for i, raw := range strings.Split(body, "\n") {
		s := strings.TrimSpace(raw)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", file, line+1+i)
		k, v, ok := strings.Cut(s, ":")
		if !ok {
			return fmt.Errorf("%s: lesson block line %q: write key: value", where, s)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "id":
			if !idRe.MatchString(v) {
				return fmt.Errorf("%s: id %q: use lowercase words joined by -", where, v)
			}
			l.ID = v
		case "number":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("%s: number %q is not a positive whole number", where, v)
			}
			l.Number = n
		case "part":
			switch lab.Part(v) {
			case lab.PartIdempotency, lab.PartBroker, lab.PartOutbox:
				l.Part = lab.Part(v)
			default:
				return fmt.Errorf("%s: part %q: use idempotency, broker or outbox", where, v)
			}
		case "lang":
			l.Lang = v
		case "explain-only":
			l.ExplainOnly = v == "true" || v == "yes"
		case "needs":
			for _, c := range strings.Split(v, ",") {
				if c = strings.TrimSpace(c); c != "" {
					l.Needs = append(l.Needs, lab.Capability(c))
				}
			}
		case "table":
			// table: DB TABLE [| QUERY]
			spec, q, _ := strings.Cut(v, "|")
			f := strings.Fields(spec)
			if len(f) != 2 {
				return fmt.Errorf("%s: table: write DB TABLE, optionally | QUERY", where)
			}
			q = strings.TrimSpace(q)
			if q == "" {
				q = "SELECT * FROM " + f[1]
			}
			l.Tables = append(l.Tables, lab.TableView{Title: f[1], DB: f[0], Query: q})
		case "queue":
			for _, q := range strings.Split(v, ",") {
				if q = strings.TrimSpace(q); q != "" {
					l.Queues = append(l.Queues, q)
				}
			}
		default:
			return fmt.Errorf("%s: unknown lesson key %q (id, number, part, lang, needs, table, queue, explain-only)", where, k)
		}
	}
	switch {
	case l.ID == "":
		return fmt.Errorf("%s:%d: lesson block has no id:", file, line)
	case l.Number == 0:
		return fmt.Errorf("%s:%d: lesson block has no number:", file, line)
	case l.Part == "":
		return fmt.Errorf("%s:%d: lesson block has no part:", file, line)
	}
	return nil
}

func checkChoices(l *lab.Lesson) error {
	opts := steps.Choices(l)
	for _, s := range l.Steps() {
		w, ok := s.Attrs["when"]
		if !ok {
			continue
		}
		name, list, _ := strings.Cut(w, ":")
		choice, ok := opts[name]
		if !ok {
			return fmt.Errorf("%s: when=%s names no choice step of this lesson", s.Where(), w)
		}
		for _, o := range strings.Split(list, ",") {
			found := false
			for _, c := range choice {
				found = found || c.Name == o
			}
			if !found {
				return fmt.Errorf("%s: when=%s: %q is not an option of choice %s", s.Where(), w, o, name)
			}
		}
	}
	return nil
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

// Find returns the lesson with id in lessons.
func Find(lessons []*lab.Lesson, id string) *lab.Lesson {
	for _, l := range lessons {
		if l.ID == id {
			return l
		}
	}
	return nil
}

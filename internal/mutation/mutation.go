// Package mutation changes one expected value of a lesson and wants its
// replay to fail exactly there. A check that passes whatever the servers
// answered (a verb reading a field the step never fills, `not` turning an
// error into a pass) survives its mutant, and the suite names it.
//
// The sites are every expectation line, a ledger's expect= verdict, a sql
// or await step's error= code, a wait's exit code and a broker-restart's
// ready count. A mutant keeps one path of the lesson's choices, one on
// which the changed step runs, so replaying it costs one path.
package mutation

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/replay"
	"github.com/rmlab/lab/steps"
)

// Mutant is a copy of a lesson with one expected value changed.
type Mutant struct {
	Lesson   *lab.Lesson // the copy, cut to Path
	ID       string      // the lesson's id
	Step     int         // the changed step's line (its fence), where replay must fail
	Line     int         // the file line changed
	From, To string      // what it said and what the mutant says
	Path     string      // the choices taken ("winner=commit"), "" without any
}

func (m Mutant) String() string {
	s := fmt.Sprintf("%s:%d  %s → %s", m.ID, m.Line, m.From, m.To)
	if m.Path != "" {
		s += "  [" + m.Path + "]"
	}
	return s
}

// Of lists every mutant of l, in file order.
func Of(l *lab.Lesson) []Mutant {
	if l.ExplainOnly {
		return nil
	}
	var out []Mutant
	all := l.Steps()
	for i, s := range all {
		path := pathFor(l, s)
		if path == nil {
			continue // on no path: never runs
		}
		for _, site := range sites(s) {
			m := Mutant{ID: l.ID, Step: s.Line, Line: site.line, From: site.from, To: site.to, Path: pathText(path)}
			m.Lesson = cut(l, path, i, site.step)
			out = append(out, m)
		}
	}
	return out
}

// Sample picks up to n mutants of each lesson, drawn by seed: the same
// seed picks the same ones, so a surviving mutant can be run again.
func Sample(ms []Mutant, n int, seed uint64) []Mutant {
	rng := rand.New(rand.NewPCG(seed, 0x6d75746174696f6e))
	var out []Mutant
	for i := 0; i < len(ms); {
		j := i
		for j < len(ms) && ms[j].ID == ms[i].ID {
			j++
		}
		group := slices.Clone(ms[i:j])
		rng.Shuffle(len(group), func(a, b int) { group[a], group[b] = group[b], group[a] })
		group = group[:min(n, len(group))]
		slices.SortFunc(group, func(a, b Mutant) int { return a.Line - b.Line })
		out = append(out, group...)
		i = j
	}
	return out
}

// Verdict is what a mutant's replay showed.
type Verdict string

const (
	Killed   Verdict = "KILLED"   // it failed at the changed step: the check works
	Survived Verdict = "SURVIVED" // it passed: the check passes whatever happened
	Broken   Verdict = "BROKEN"   // it failed or skipped elsewhere: the lesson, not the mutant
)

// Judge reads a mutant's replay.
func (m Mutant) Judge(lr replay.LessonReport) (Verdict, string) {
	if lr.Passed {
		return Survived, "the replay passed with " + m.To
	}
	if lr.Skipped {
		return Broken, "skipped: " + lr.Why
	}
	for _, st := range lr.Steps {
		if !st.Passed {
			if st.Line == m.Step {
				return Killed, st.Why
			}
			return Broken, fmt.Sprintf("failed at line %d before the change: %s", st.Line, lr.Why)
		}
	}
	return Broken, lr.Why
}

// site is one value a step expects, and its mutation.
type site struct {
	line     int
	from, to string
	step     *lab.Step // the step with the change made
}

func sites(s *lab.Step) []site {
	var out []site
	withAttr := func(k, v, from string) {
		c := clone(s)
		c.Attrs[k] = v
		out = append(out, site{line: s.Line, from: from, to: k + "=" + attrText(v), step: c})
	}
	switch s.Kind {
	case "expect":
		lines := strings.Split(s.Body, "\n")
		for i, raw := range lines {
			line := strings.TrimSpace(raw)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			to, ok := Line(line)
			if !ok {
				continue
			}
			c := clone(s)
			changed := slices.Clone(lines)
			changed[i] = to
			c.Body = strings.Join(changed, "\n")
			out = append(out, site{line: s.Line + 1 + i, from: line, to: to, step: c})
		}
	case "ledger":
		if v := s.Attrs["expect"]; v != "" {
			to := "applied once"
			if v == "applied once" {
				to = "duplicated"
			}
			withAttr("expect", to, "expect="+attrText(v))
		}
	case "sql", "await":
		if v := s.Attrs["error"]; v != "" {
			withAttr("error", other(v), "error="+v)
		}
	case "wait":
		if s.Attrs["until"] == "exit" {
			n, _ := strconv.Atoi(s.Attr("exit", "0"))
			withAttr("exit", strconv.Itoa((n+1)%256), "exit="+strconv.Itoa(n))
		}
	case "broker-restart":
		lines := strings.Split(s.Body, "\n")
		for i, raw := range lines {
			f := strings.Fields(raw)
			if len(f) != 3 || f[1] != "ready" {
				continue
			}
			c := clone(s)
			changed := slices.Clone(lines)
			changed[i] = f[0] + " ready " + other(f[2])
			c.Body = strings.Join(changed, "\n")
			out = append(out, site{line: s.Line + 1 + i, from: strings.TrimSpace(raw), to: changed[i], step: c})
		}
	}
	return out
}

// Line is an expectation line with its expected value changed, so that it
// cannot hold where the original held: a count one more, another value,
// the other confirm, a negation where the verb has no value.
func Line(line string) (string, bool) {
	if rest, ok := strings.CutPrefix(line, "not "); ok {
		return rest, true
	}
	verb, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	f := strings.Fields(arg)
	last := func() string {
		f[len(f)-1] = other(f[len(f)-1])
		return verb + " " + strings.Join(f, " ")
	}
	switch verb {
	case "ok", "waiting", "unavailable", "contains", "error":
		return "not " + line, true
	case "affected", "rows", "returned", "delivered", "ready", "unacked", "consumers", "value", "fact":
		if len(f) == 0 || verb == "fact" && len(f) < 2 {
			return "", false
		}
		return last(), true // the count, or the value's last word
	case "row":
		cells := strings.Split(arg, "|")
		cells[len(cells)-1] = " " + other(strings.TrimSpace(cells[len(cells)-1]))
		return "row " + strings.TrimSpace(strings.Join(cells, "|")), true
	case "confirm":
		to := map[string]string{"ack": "nack", "nack": "ack", "timeout": "ack", "unknown": "ack", "none": "ack"}[arg]
		return "confirm " + to, to != ""
	case "redelivered":
		switch arg {
		case "true":
			return "redelivered false", true
		case "false":
			return "redelivered true", true
		}
		return last(), true
	case "tags":
		return line + " 99", true
	case "header":
		if len(f) < 2 {
			return "not " + line, true
		}
		return last(), true
	case "elapsed":
		if len(f) == 2 {
			op := map[string]string{">=": "<", ">": "<", "<": ">=", "<=": ">="}[f[0]]
			return "elapsed " + op + " " + f[1], op != ""
		}
	}
	return "", false
}

// attrText is an attribute's value as a lesson writes it.
func attrText(v string) string {
	if strings.ContainsAny(v, " \"") {
		return strconv.Quote(v)
	}
	return v
}

// other is a value that is not v: a number one more, a boolean flipped,
// a word with a suffix.
func other(v string) string {
	if n, err := strconv.Atoi(v); err == nil {
		return strconv.Itoa(n + 1)
	}
	switch v {
	case "true":
		return "false"
	case "false":
		return "true"
	case "NULL":
		return "0"
	}
	return v + "-mutant"
}

func clone(s *lab.Step) *lab.Step {
	c := *s
	c.Attrs = map[string]string{}
	for k, v := range s.Attrs {
		c.Attrs[k] = v
	}
	return &c
}

// pathFor is the first path of l's choices on which s runs.
func pathFor(l *lab.Lesson, s *lab.Step) map[string]string {
	for _, p := range steps.Paths(l) {
		if (&steps.Run{Choices: p}).Applies(s) {
			return p
		}
	}
	return nil
}

func pathText(p map[string]string) string {
	var parts []string
	for k, v := range p {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// cut copies l with step i replaced by changed and every choice cut to the
// option path takes, so a replay of the copy runs that path only.
func cut(l *lab.Lesson, path map[string]string, i int, changed *lab.Step) *lab.Lesson {
	c := *l
	c.Blocks = slices.Clone(l.Blocks)
	n := 0
	for b := range c.Blocks {
		s := c.Blocks[b].Step
		if s == nil {
			continue
		}
		switch {
		case n == i:
			c.Blocks[b].Step = changed
		case s.Kind == "choice":
			k := clone(s)
			for _, o := range steps.Options(s) {
				if o.Name == path[s.Attrs["name"]] {
					k.Body = o.Name + ": " + o.Text
				}
			}
			c.Blocks[b].Step = k
		}
		n++
	}
	return &c
}

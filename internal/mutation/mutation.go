// Package mutation changes a lesson and wants its replay to fail where the
// change should show. Two kinds of mutant:
//
//   - expected: one expected value changed (every expectation line, a
//     ledger's expect= verdict, a sql or await step's error= code, a wait's
//     exit code, a broker-restart's ready count); the replay must fail at
//     that step. A check that passes whatever the servers answered (a verb
//     reading a field the step never fills, `not` turning an error into a
//     pass) survives, and the suite names it.
//   - fault-removed: one fault step taken out (a worker's kill, a node's
//     kill, a proxy's dropped confirm or cut; a paused worker not killed
//     goes on); some step after it must then fail, or the lesson's outcome
//     did not depend on its fault.
//   - answer-replaced: one check (an expectation line, a ledger's
//     verdict) made again with what the servers answered replaced by
//     another answer of its type; it must refuse it, or it does not read
//     the answer it claims to check (a contains that finds its text in a
//     column's name, a verb reading a field its step never fills). The
//     answer-replaced mutants of one path share a replay: the second
//     check changes nothing on the servers. (A step's own error= and
//     exit= compare their answer in one expression; their expected-value
//     mutants cover them.)
//
// A mutant keeps one path of the lesson's choices, one on which the changed
// step runs, so replaying it costs one path.
package mutation

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/replay"
	"github.com/rmlab/lab/steps"
)

// Kind is what a mutant changes.
type Kind string

const (
	Expected       Kind = "expected"        // one expected value changed
	FaultRemoved   Kind = "fault-removed"   // one fault step taken out
	AnswerReplaced Kind = "answer-replaced" // one check given another answer
)

// Kinds are the mutant kinds, in the order the suite draws them.
var Kinds = []Kind{Expected, FaultRemoved, AnswerReplaced}

// Mutant is a copy of a lesson with one change.
type Mutant struct {
	Kind     Kind
	Lesson   *lab.Lesson // the copy, cut to Path
	ID       string      // the lesson's id
	Step     int         // the changed step's line (its fence): expected fails there, fault-removed after it
	Line     int         // the file line changed
	From, To string      // what it said and what the mutant says
	Path     string      // the choices taken ("winner=commit"), "" without any
}

func (m Mutant) String() string {
	s := fmt.Sprintf("%s %s:%d  %s → %s", m.Kind, m.ID, m.Line, m.From, m.To)
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
	replaced := map[string]*lab.Lesson{} // a path's replay with answers replaced
	for i, s := range all {
		path := pathFor(l, s)
		if path == nil {
			continue // on no path: never runs
		}
		for _, site := range sites(s) {
			m := Mutant{Kind: Expected, ID: l.ID, Step: s.Line, Line: site.line, From: site.from, To: site.to, Path: pathText(path)}
			m.Lesson = cut(l, path, i, site.step)
			out = append(out, m)
			if !site.answer {
				continue
			}
			a := Mutant{Kind: AnswerReplaced, ID: l.ID, Step: s.Line, Line: site.line, From: site.from, To: sayAnotherAnswer.F(), Path: m.Path}
			if replaced[a.Path] == nil {
				c := cut(l, path, -1, nil)
				c.ReplaceAnswers = true
				replaced[a.Path] = c
			}
			a.Lesson = replaced[a.Path]
			out = append(out, a)
		}
		if f := Fault(s); f != "" {
			m := Mutant{Kind: FaultRemoved, ID: l.ID, Step: s.Line, Line: s.Line, From: f, To: sayNoFault.F(), Path: pathText(path)}
			var instead *lab.Step
			if s.Kind == "kill" && pausedAt(onPath(all[:i], path), s.Attrs["worker"]) {
				// A paused worker not killed goes on: what it would have
				// done had it not crashed (left paused, it would only
				// stall, which is a fault of its own).
				instead = clone(s)
				instead.Kind = "resume"
				instead.Attrs = map[string]string{"worker": s.Attrs["worker"], "settle": "10s"}
				m.To = sayGoesOnInstead.F(s.Attrs["worker"])
			}
			if s.Kind == "proxy" {
				// The proxy's other orders stay: a reset without the fault
				// is a proxy with none (taken out whole, the faults an
				// earlier step set would stay).
				instead = clone(s)
				for _, k := range proxyFaults {
					delete(instead.Attrs, k)
				}
				var kept []string
				for _, k := range slices.Sorted(maps.Keys(instead.Attrs)) {
					if k != "when" && k != "label" {
						kept = append(kept, strings.TrimSuffix(k+"="+attrText(instead.Attrs[k]), "="))
					}
				}
				if len(kept) == 0 {
					instead = nil
				} else {
					m.To = "proxy " + strings.Join(kept, " ") + " " + sayNoFault.F()
				}
			}
			m.Lesson = cut(l, path, i, instead)
			out = append(out, m)
		}
	}
	return out
}

// onPath is the steps that run on path.
func onPath(all []*lab.Step, path map[string]string) []*lab.Step {
	run := &steps.Run{Choices: path}
	var out []*lab.Step
	for _, s := range all {
		if run.Applies(s) {
			out = append(out, s)
		}
	}
	return out
}

// Fault is the fault a step injects, as the lesson writes it ("kill
// worker=c1"), or "" for a step that injects none: a worker's kill, a
// node's kill, a proxy told to drop a confirm or a return, delay frames or
// cut a connection. (A
// pause-at is where a kill lands, not a fault; a restart of nodes is the
// recovery. A broker-restart holds its own checks, what each queue kept,
// in its body: taken out, its checks would go with it, and the mutant
// would prove nothing; its expected-value mutants change those.)
func Fault(s *lab.Step) string {
	switch s.Kind {
	case "kill":
		return "kill " + attrsText(s, "worker")
	case "nodes":
		if s.Attrs["kill"] != "" {
			return "nodes " + attrsText(s, "kill")
		}
	case "proxy":
		if f := attrsText(s, proxyFaults...); f != "" {
			return "proxy " + f
		}
	}
	return ""
}

// proxyFaults are a proxy step's orders that inject a fault (its reset and
// show do not).
var proxyFaults = []string{"drop-confirm", "drop-return", "delay", "cut-after"}

// pausedAt reports whether worker w is paused after steps: the last step
// that names it is a wait until one of its spawn's pause-at points.
func pausedAt(steps []*lab.Step, w string) bool {
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		switch {
		case s.Kind == "wait" && s.Attrs["worker"] == w:
			for j := i - 1; j >= 0; j-- {
				if sp := steps[j]; sp.Kind == "spawn" && sp.Attrs["name"] == w {
					return slices.Contains(strings.Split(sp.Attrs["pause-at"], ","), s.Attrs["until"])
				}
			}
			return false
		case (s.Kind == "resume" || s.Kind == "kill" || s.Kind == "stop") && s.Attrs["worker"] == w,
			s.Kind == "spawn" && s.Attrs["name"] == w:
			return false
		}
	}
	return false
}

// attrsText is s's attributes named, as the lesson writes them.
func attrsText(s *lab.Step, names ...string) string {
	var parts []string
	for _, k := range names {
		if v, ok := s.Attrs[k]; ok {
			parts = append(parts, k+"="+attrText(v))
		}
	}
	return strings.Join(parts, " ")
}

// Sample picks up to n mutants of each kind of each lesson, drawn by seed:
// the same seed picks the same ones, so a surviving mutant can be run
// again. kinds nil is every kind.
func Sample(ms []Mutant, n int, seed uint64, kinds []Kind) []Mutant {
	rng := rand.New(rand.NewPCG(seed, 0x6d75746174696f6e))
	var out []Mutant
	for i := 0; i < len(ms); {
		j := i
		for j < len(ms) && ms[j].ID == ms[i].ID {
			j++
		}
		var group []Mutant
		for _, k := range Kinds {
			var of []Mutant
			for _, m := range ms[i:j] {
				if m.Kind == k {
					of = append(of, m)
				}
			}
			// Every kind is drawn, then the kinds not asked for are left
			// out: a seed draws the same mutants with or without --kind.
			rng.Shuffle(len(of), func(a, b int) { of[a], of[b] = of[b], of[a] })
			if kinds == nil || slices.Contains(kinds, k) {
				group = append(group, of[:min(n, len(of))]...)
			}
		}
		slices.SortStableFunc(group, func(a, b Mutant) int { return a.Line - b.Line })
		out = append(out, group...)
		i = j
	}
	return out
}

// ParseKinds reads a comma-separated list of kinds ("" is every kind).
func ParseKinds(list string) ([]Kind, error) {
	if list == "" {
		return nil, nil
	}
	var out []Kind
	for _, w := range strings.Split(list, ",") {
		k := Kind(strings.TrimSpace(w))
		if !slices.Contains(Kinds, k) {
			return nil, errors.New(sayNoKind.F(string(k), Expected, FaultRemoved, AnswerReplaced))
		}
		out = append(out, k)
	}
	return out, nil
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
	if m.Kind == AnswerReplaced {
		return m.judgeReplaced(lr)
	}
	if lr.Passed {
		if m.Kind == FaultRemoved {
			return Survived, sayPassedWithout.F(m.From, m.Step)
		}
		return Survived, sayPassedWith.F(m.To)
	}
	if lr.Skipped {
		return Broken, saySkipped.F(lr.Why)
	}
	for _, st := range lr.Steps {
		if !st.Passed {
			switch {
			case m.Kind != FaultRemoved && st.Line == m.Step:
				return Killed, sayFailedAt.F(st.Line, st.Why)
			case m.Kind == FaultRemoved && st.Line > m.Step && setup[st.Kind]:
				// A worker the lesson means to start again still running,
				// a kill that finds it gone: the mutant's own doing, not a
				// check that read what the fault did.
				return Broken, saySetupFailed.F(st.Line, st.Kind, st.Why)
			case m.Kind == FaultRemoved && st.Line > m.Step:
				return Killed, sayFailedAt.F(st.Line, st.Why)
			case st.Line == m.Step:
				return Broken, sayFailedAtChange.F(st.Line, st.Why)
			}
			return Broken, sayFailedBefore.F(st.Line, lr.Why)
		}
	}
	return Broken, lr.Why
}

// judgeReplaced reads the check made again with another answer: refused
// is KILLED, held is SURVIVED; no second check (the check itself failed,
// or its step never ran) is BROKEN: the lesson, not the mutant.
func (m Mutant) judgeReplaced(lr replay.LessonReport) (Verdict, string) {
	for _, st := range lr.Steps {
		if st.Line != m.Step {
			continue
		}
		for _, rp := range st.Replaced {
			if rp.Line != m.Line {
				continue
			}
			if rp.Held {
				return Survived, sayHeldWithAnswer.F(m.From, rp.Answer)
			}
			return Killed, sayFailedAt.F(rp.Line, rp.Answer+": "+rp.Why)
		}
		if !st.Passed {
			return Broken, sayFailedAtChange.F(st.Line, st.Why)
		}
	}
	if lr.Skipped {
		return Broken, saySkipped.F(lr.Why)
	}
	for _, st := range lr.Steps {
		if !st.Passed {
			return Broken, sayFailedBefore.F(st.Line, st.Why)
		}
	}
	return Broken, sayNotMade.F(m.Line)
}

// setup are the step kinds that start, end or reset what a lesson checks:
// their failing after a removed fault is no check's verdict.
var setup = map[string]bool{"spawn": true, "kill": true, "resume": true, "stop": true, "reset": true}

// site is one value a step expects, and its mutation.
type site struct {
	line     int
	from, to string
	step     *lab.Step // the step with the change made
	answer   bool      // a check of a server's answer (an answer-replaced mutant's too)
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
			out = append(out, site{line: s.Line + 1 + i, from: line, to: to, step: c, answer: true})
		}
	case "ledger":
		if v := s.Attrs["expect"]; v != "" {
			to := "applied once"
			if v == "applied once" {
				to = "duplicated"
			}
			withAttr("expect", to, "expect="+attrText(v))
			out[len(out)-1].answer = true
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
		to := steps.OtherConfirm[arg]
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

// other is a value that is not v (steps.Other, marked "-mutant").
func other(v string) string { return steps.Other(v, "mutant") }

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

// cut copies l with step i replaced by changed (taken out where changed is
// nil) and every choice cut to the option path takes, so a replay of the
// copy runs that path only.
func cut(l *lab.Lesson, path map[string]string, i int, changed *lab.Step) *lab.Lesson {
	c := *l
	c.Blocks = slices.Clone(l.Blocks)
	n := 0
	drop := -1
	for b := range c.Blocks {
		s := c.Blocks[b].Step
		if s == nil {
			continue
		}
		switch {
		case n == i && changed == nil:
			drop = b
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
	if drop >= 0 {
		c.Blocks = slices.Delete(c.Blocks, drop, drop+1)
	}
	return &c
}

package labs

import (
	"slices"
	"strings"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/programs"
	"github.com/rmlab/lab/steps"
)

// The checks here follow what a lesson builds at the broker and what its
// workers are told: mistakes the broker or a program would only reveal
// many steps later, or never (a dead-lettered message dropped silently).

// declLine is one line of a declare step as lab check reads it.
type declLine struct {
	line       int // in the file
	what, name string
	other      string // bind: the exchange
	opts       map[string]string
}

// declLines are every declare line of the lesson, on any path.
func declLines(l *lab.Lesson) []declLine {
	var out []declLine
	for _, s := range l.Steps() {
		if s.Kind != "declare" {
			continue
		}
		for i, raw := range strings.Split(s.Body, "\n") {
			f := strings.Fields(raw)
			if len(f) < 2 || strings.HasPrefix(f[0], "#") {
				continue
			}
			d := declLine{line: s.Line + 1 + i, what: f[0], name: f[1], opts: map[string]string{}}
			rest := f[2:]
			if d.what == "bind" && len(rest) > 0 {
				d.other, rest = rest[0], rest[1:]
			}
			for _, o := range rest {
				k, v, _ := strings.Cut(o, "=")
				d.opts[k] = v
			}
			out = append(out, d)
		}
	}
	return out
}

// queueTypes is each declared queue's type, by article name ("" when a
// choice decides it, or two declares disagree).
func queueTypes(decls []declLine) map[string]string {
	types := map[string]string{}
	for _, d := range decls {
		if d.what != "queue" {
			continue
		}
		t := d.opts["type"]
		if t == "" {
			t = broker.Classic
		}
		if steps.VarRe.MatchString(t) {
			t = ""
		}
		if old, ok := types[d.name]; ok && old != t {
			t = ""
		}
		types[d.name] = t
	}
	return types
}

// lintTopology: an exchange named as a dead-letter or alternate exchange
// that no declare step declares, and a queue argument the queue's type
// does not honour.
func lintTopology(l *lab.Lesson, add func(line int, format string, args ...any)) {
	decls := declLines(l)
	exchanges := map[string]bool{}
	for _, d := range decls {
		if d.what == "exchange" {
			exchanges[d.name] = true
		}
	}
	for _, d := range decls {
		if x := d.other; d.what == "bind" && x != "" && !exchanges[x] && !strings.HasPrefix(x, "amq.") && !steps.VarRe.MatchString(x) {
			add(d.line, "bind %s %s: no declare step declares exchange %s%s, so this bind fails with 404 NOT_FOUND; add `exchange %s type=…` to a declare step before it",
				d.name, x, x, steps.Suggest(x, slices.Sorted(mapsKeys(exchanges))), x)
		}
		for _, arg := range []string{"x-dead-letter-exchange", "alternate-exchange"} {
			x, ok := d.opts[arg]
			if !ok || x == "" || exchanges[x] || strings.HasPrefix(x, "amq.") || steps.VarRe.MatchString(x) {
				continue
			}
			why := "the broker drops a dead-lettered message silently when its exchange does not exist"
			if arg == "alternate-exchange" {
				why = "the broker drops an unroutable message silently when the alternate exchange does not exist"
			}
			add(d.line, "%s %s %s=%s: no declare step declares exchange %s%s, and %s; add `exchange %s type=fanout` (and a queue bound to it) to a declare step",
				d.what, d.name, arg, x, x, steps.Suggest(x, slices.Sorted(mapsKeys(exchanges))), why, x)
		}
		if d.what != "queue" {
			continue
		}
		typ := d.opts["type"]
		if typ == "" {
			typ = broker.Classic
		}
		if steps.VarRe.MatchString(typ) {
			continue
		}
		for k, v := range d.opts {
			if why := broker.Refuses(typ, k, v); why != "" {
				add(d.line, "queue %s type=%s %s=%s: %s", d.name, typ, k, v, why)
			}
		}
	}
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// countHeaders are delivery headers only some queue types set.
var countHeaders = map[string]string{
	"x-delivery-count": "quorum queues count returned deliveries in x-delivery-count",
	"x-acquired-count": "RabbitMQ 4.x's quorum queues count every delivery in x-acquired-count",
}

// lintHeaders: `expect header x-delivery-count` (or `not header …`) after a
// consume of a queue whose type never sets that header: the positive form
// can never pass, the negative one never fail.
func lintHeaders(l *lab.Lesson, add func(line int, format string, args ...any)) {
	types := queueTypes(declLines(l))
	all := l.Steps()
	for at, e := range all {
		if e.Kind != "expect" || e.Attrs["of"] != "" {
			continue
		}
		var consume *lab.Step
		for i := at - 1; i >= 0; i-- {
			if steps.Leaves(all[i].Kind) {
				if all[i].Kind == "consume" {
					consume = all[i]
				}
				break
			}
		}
		if consume == nil {
			continue
		}
		q := consume.Attrs["queue"]
		typ, known := types[q]
		if !known || typ == "" || typ == broker.Quorum {
			continue
		}
		for i, line := range strings.Split(e.Body, "\n") {
			line = strings.TrimSpace(line)
			negated := strings.HasPrefix(line, "not ")
			verb, arg, _ := strings.Cut(strings.TrimPrefix(line, "not "), " ")
			name, _, _ := strings.Cut(arg, " ")
			why, ok := countHeaders[name]
			if verb != "header" || !ok {
				continue
			}
			never := "so this can never pass"
			if negated {
				never = "so `not header` always passes and shows nothing"
			}
			add(e.Line+1+i, "%s: queue %s is a %s queue, which never sets %s (%s), %s; declare the queue type=quorum, or check another header",
				line, q, typ, name, why, never)
		}
	}
}

// lintSpawnFlags checks a spawn's body against the program's own flags, and
// with the program's own parser where it has one, along every path.
func lintSpawnFlags(s *lab.Step, choices map[string][]steps.Option, add func(line int, format string, args ...any)) {
	prog := s.Attrs["program"]
	flags, ok := programs.Flags(prog)
	if !ok {
		return
	}
	for i, raw := range strings.Split(s.Body, "\n") {
		for _, tok := range strings.Fields(raw) {
			if !strings.HasPrefix(tok, "-") || len(tok) < 2 || (tok[1] >= '0' && tok[1] <= '9') {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimLeft(tok, "-"), "=")
			if name == "name" || name == "pause-at" {
				add(s.Line+1+i, "spawn: %s is the step's own attribute: write spawn %s=… on the fence line", tok, name)
				continue
			}
			if !slices.Contains(flags, name) {
				add(s.Line+1+i, "spawn program=%s: %s is not one of its flags%s; its flags are --%s (lab worker %s --help)",
					prog, tok, dashed(steps.Suggest(name, flags)), strings.Join(flags, ", --"), prog)
			}
		}
	}
	p, _ := programs.Find(prog)
	if p.Check == nil {
		return
	}
	seen := map[string]bool{}
	for _, body := range expansions(checkValues(s.Body), choices) {
		if err := p.Check(strings.Fields(body)); err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			if strings.Contains(msg, "flag provided but not defined") || seen[msg] {
				continue // reported above, by name
			}
			seen[msg] = true
			add(s.Line, "spawn program=%s: %s", prog, msg)
		}
	}
}

// checkValues is a body as lab check runs it through a program's parser:
// ${lease:30} is 30, ${provider} and ${proxy} an address; a choice's
// ${name} is left for expansions.
func checkValues(body string) string {
	return steps.VarRe.ReplaceAllStringFunc(body, func(m string) string {
		sub := steps.VarRe.FindStringSubmatch(m)
		switch {
		case sub[2] != "":
			return sub[2]
		case slices.Contains(steps.BuiltinVars, sub[1]):
			return "127.0.0.1:1"
		}
		return m
	})
}

// dashed turns Suggest's " (did you mean x?)" into " (did you mean --x?)".
func dashed(s string) string {
	return strings.Replace(s, "did you mean ", "did you mean --", 1)
}

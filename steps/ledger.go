package steps

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	lab "github.com/rmlab/lab"
)

// Source reads one figure for a ledger line ("broker: ..." and the like).
type Source func(ctx context.Context, r *Run, s *lab.Step, expr string) (int, error)

var (
	sourcesMu sync.RWMutex
	sources   = map[string]Source{"redis": redisSource}
)

// registerSource adds a ledger source prefix, e.g. "broker".
func registerSource(prefix string, src Source) {
	sourcesMu.Lock()
	defer sourcesMu.Unlock()
	sources[prefix] = src
}

var ledgerFields = []string{"intended", "committed", "published", "delivered", "applied", "absorbed", "waiting", "unavailable", "lost", "duplicated"}

// Verdicts are what a ledger's expect= may name, as lab.Ledger.Verdict
// gives them.
var Verdicts = []string{"applied once", "lost", "duplicated", "lost and duplicated", "waiting", "unavailable"}

// ledgerKind counts, from queries made at that moment, what a variant
// intended and what happened.
//
//	```ledger variant=unsafe label="dedup by message id" expect=duplicated
//	intended: 1
//	applied: SELECT points DIV 10 FROM points_account WHERE user_id=7
//	```
//
// Each line is FIELD: NUMBER, FIELD: SELECT ... (first column of the first
// row, on db=), or FIELD: PREFIX: EXPR for a registered source (redis: GET
// lab:x). lost and duplicated default to intended−applied−waiting−
// unavailable and applied−intended. expect= names the verdict the lesson
// shows: lost, duplicated, "applied once", waiting (not applied, still
// queued), unavailable (there, but no node serves it now).
type ledgerKind struct{}

func (ledgerKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "variant", "expect", "db"); err != nil {
		return err
	}
	if err := checkDB(s, s.Attrs["db"]); err != nil {
		return err
	}
	switch s.Attrs["variant"] {
	case "unsafe", "safe":
	default:
		return fmt.Errorf("%s: ledger needs variant=unsafe or variant=safe", s.Where())
	}
	switch v := s.Attrs["expect"]; {
	case contains(Verdicts, v):
	case v == "":
		// A ledger without a verdict to meet passes whatever it counts.
		return fmt.Errorf("%s: ledger has no expect=: write the verdict it must show, expect=lost, duplicated or \"applied once\" (a ledger without one never fails)", s.Where())
	default:
		return fmt.Errorf("%s: ledger expect=%q: use lost, duplicated, waiting, unavailable or \"applied once\"", s.Where(), s.Attrs["expect"])
	}
	if s.Attrs["variant"] == "safe" && s.Attrs["expect"] != "applied once" {
		return fmt.Errorf("%s: ledger variant=safe expect=%q: the safe variant is the one that applies each message once: expect=\"applied once\"", s.Where(), s.Attrs["expect"])
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(s.Body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f, _, ok := strings.Cut(line, ":")
		if !ok || !contains(ledgerFields, f) {
			return fmt.Errorf("%s:%d: ledger line %q: write FIELD: value, FIELD one of %s", s.File, s.Line+1+i, line, strings.Join(ledgerFields, ", "))
		}
		seen[f] = true
	}
	if !seen["intended"] || !seen["applied"] {
		return fmt.Errorf("%s: ledger needs at least intended: and applied:", s.Where())
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (ledgerKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	l := &lab.Ledger{Variant: s.Attrs["variant"], Label: s.Attrs["label"]}
	got := map[string]int{}
	res := lab.Result{Passed: true}
	for _, line := range strings.Split(s.Body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f, expr, _ := strings.Cut(line, ":")
		expr = strings.TrimSpace(expr)
		n, sent, err := r.figure(ctx, s, expr)
		if err != nil {
			return fail("ledger %s: %v", f, err)
		}
		if sent != "" {
			res.Sent = append(res.Sent, sent)
		}
		got[f] = n
		l.Fields = append(l.Fields, f)
	}
	tally(l, got)
	res.Ledger = l
	res.Observed = ledgerText(*l)
	want := s.Attrs["expect"]
	if want != "" && l.Verdict() != want {
		res.Passed = false
		res.Why = fmt.Sprintf("the %s variant was expected to end %q but ended %q", l.Variant, want, l.Verdict())
	}
	if want != "" && res.Passed && r.Lesson != nil && r.Lesson.ReplaceAnswers {
		res.Replaced = append(res.Replaced, replacedLedger(*l, got, want, s.Line))
	}
	return res
}

// tally fills l from the figures read (field → count): what was lost and
// what applied twice, where the ledger does not read them itself, follow
// from intended, applied, waiting and unavailable.
func tally(l *lab.Ledger, got map[string]int) {
	l.Intended, l.Applied = got["intended"], got["applied"]
	l.Committed, l.Published, l.Delivered, l.Absorbed = got["committed"], got["published"], got["delivered"], got["absorbed"]
	l.Waiting, l.Unavailable = got["waiting"], got["unavailable"]
	l.Lost, l.Twice = 0, 0
	if v, ok := got["lost"]; ok {
		l.Lost = v
	} else if rest := l.Intended - l.Applied - l.Waiting - l.Unavailable; rest > 0 {
		l.Lost = rest
	}
	if v, ok := got["duplicated"]; ok {
		l.Twice = v
	} else if l.Applied > l.Intended {
		l.Twice = l.Applied - l.Intended
	}
}

// replacedLedger tallies the ledger again with the figure its verdict
// rests on read otherwise (an answer-replaced check): applied once with
// one applied more (or one duplicated, where the ledger reads that), lost
// with nothing lost, duplicated with nothing twice, waiting and
// unavailable with nothing so. Its verdict must then be another.
func replacedLedger(l lab.Ledger, got map[string]int, want string, line int) lab.Replacement {
	g := maps.Clone(got)
	field := ""
	set := func(k string, v int) {
		field = fmt.Sprintf("%s %d", k, v)
		g[k] = v
	}
	switch want {
	case "applied once":
		if _, ok := g["duplicated"]; ok {
			set("duplicated", g["duplicated"]+1)
		} else {
			set("applied", g["applied"]+1)
		}
	case "lost", "lost and duplicated":
		if _, ok := g["lost"]; ok {
			set("lost", 0)
		} else {
			set("applied", g["intended"]-g["waiting"]-g["unavailable"])
		}
	case "duplicated":
		if _, ok := g["duplicated"]; ok {
			set("duplicated", 0)
		} else {
			set("applied", min(g["applied"], g["intended"]))
		}
	case "waiting", "unavailable":
		set(want, 0)
	}
	tally(&l, g)
	rp := lab.Replacement{Line: line, Answer: field, Held: l.Verdict() == want}
	if !rp.Held {
		rp.Why = fmt.Sprintf("ended %q", l.Verdict())
	}
	return rp
}

// ledgerText is the one-line form used by replay and the transcript.
func ledgerText(l lab.Ledger) string {
	s := fmt.Sprintf("%s", l.Variant)
	if l.Label != "" {
		s += " (" + l.Label + ")"
	}
	s += fmt.Sprintf(": intended %d", l.Intended)
	for _, p := range []struct {
		k string
		v int
	}{{"committed", l.Committed}, {"published", l.Published}, {"delivered", l.Delivered}} {
		if p.v > 0 {
			s += fmt.Sprintf(", %s %d", p.k, p.v)
		}
	}
	s += fmt.Sprintf(", applied %d", l.Applied)
	if l.Absorbed > 0 {
		s += fmt.Sprintf(", duplicates absorbed %d", l.Absorbed)
	}
	if l.Waiting > 0 {
		s += fmt.Sprintf(", waiting %d", l.Waiting)
	}
	if l.Unavailable > 0 {
		s += fmt.Sprintf(", unavailable %d", l.Unavailable)
	}
	s += fmt.Sprintf(", lost %d, duplicated %d → %s", l.Lost, l.Twice, l.Verdict())
	return s
}

// figure evaluates one ledger expression and returns what was sent.
func (r *Run) figure(ctx context.Context, s *lab.Step, expr string) (int, string, error) {
	if n, err := strconv.Atoi(expr); err == nil {
		return n, "", nil
	}
	if r.Env == nil || r.Env.Svc == nil { // a number needs no server; anything else does
		return 0, "", fmt.Errorf("no services to read %q from (see lab doctor)", expr)
	}
	if isQuery(expr) {
		stmt := r.Env.Svc.Names.SQL(expr)
		c, err := r.Env.Svc.MySQL.Conn(ctx)
		if err != nil {
			return 0, stmt, err
		}
		defer c.Close()
		if db := r.dbOf(s); db != "" {
			if _, err := c.ExecContext(ctx, "USE `"+db+"`"); err != nil {
				return 0, stmt, err
			}
		}
		var v *int64
		if err := c.QueryRowContext(ctx, stmt).Scan(&v); err != nil {
			return 0, stmt, fmt.Errorf("%s: %w", stmt, err)
		}
		if v == nil {
			return 0, stmt, nil
		}
		return int(*v), stmt, nil
	}
	prefix, rest, ok := strings.Cut(expr, ":")
	if ok {
		sourcesMu.RLock()
		src := sources[strings.TrimSpace(prefix)]
		sourcesMu.RUnlock()
		if src != nil {
			n, err := src(ctx, r, s, strings.TrimSpace(rest))
			// Shown as run: a SELECT inside a source (outbox: … minus
			// SELECT …) names the learner's databases.
			shown := expr
			if r.Env != nil && r.Env.Svc != nil {
				shown = r.Env.Svc.Names.SQL(expr)
			}
			return n, shown, err
		}
	}
	return 0, "", fmt.Errorf("cannot read %q: write a number, a SELECT, or a source prefix (%s)", expr, strings.Join(sourceNames(), ", "))
}

func sourceNames() []string {
	sourcesMu.RLock()
	defer sourcesMu.RUnlock()
	var out []string
	for k := range sources {
		out = append(out, k+":")
	}
	return out
}

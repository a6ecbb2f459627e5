package steps

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	lab "github.com/rmlab/lab"
)

// verbFunc checks one expectation line against an outcome. arg is the rest of
// the line after the verb.
type verbFunc func(r *Run, o *Outcome, arg string) error

var (
	verbsMu sync.RWMutex
	verbs   = map[string]verbFunc{
		"ok":       verbOK,
		"error":    verbError,
		"affected": verbAffected,
		"rows":     verbRows,
		"value":    verbValue,
		"row":      nil, // handled in order by expectKind
		"waiting":  verbWaiting,
		"elapsed":  verbElapsed,
		"fact":     verbFact,
		"contains": verbContains,
	}
)

// unevaluable is a verb's answer when the expectation cannot be evaluated
// at all: a malformed argument, a fact the step does not report, a verb on
// a step kind whose outcome does not carry what it reads, a queue that does
// not exist. It fails the line with or without `not`: "not fact lsot 0" and
// "not confirm ack" after a consume fail, not pass.
type unevaluable struct{ Err error }

func (u *unevaluable) Error() string { return "cannot be checked: " + u.Err.Error() }
func (u *unevaluable) Unwrap() error { return u.Err }

func cannot(format string, args ...any) error {
	return &unevaluable{fmt.Errorf(format, args...)}
}

// registerVerb adds an expectation verb (the broker part adds confirm,
// returned, redelivered and queue counts this way).
func registerVerb(name string, v verbFunc) {
	verbsMu.Lock()
	defer verbsMu.Unlock()
	verbs[name] = v
}

// expectKind checks the last outcome, or the last of of="sql B".
//
//	```expect
//	error 1062
//	```
//
// One expectation per line: ok | error CODE | affected N | rows N |
// value V | row V1 | V2 ... (the i-th row line matches the i-th row) |
// waiting | elapsed >= 1s | elapsed < 5s | fact KEY VALUE | contains TEXT.
// "not " before any of them passes when it fails: not contains TEXT.
type expectKind struct{}

func (expectKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "of"); err != nil {
		return err
	}
	n := 0
	for i, line := range strings.Split(s.Body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		verb, _, _ := strings.Cut(strings.TrimPrefix(line, "not "), " ")
		verbsMu.RLock()
		_, ok := verbs[verb]
		verbsMu.RUnlock()
		if !ok {
			return fmt.Errorf("%s:%d: unknown expectation %q%s; known: %s (any of them after not)", s.File, s.Line+1+i, verb,
				Suggest(verb, VerbNames()), strings.Join(VerbNames(), ", "))
		}
		if verb == "row" && strings.HasPrefix(line, "not ") {
			return fmt.Errorf("%s:%d: not row: row lines match rows in order; check a row's absence with not contains TEXT", s.File, s.Line+1+i)
		}
		_, arg, _ := strings.Cut(strings.TrimPrefix(line, "not "), " ")
		if err := checkVerbArg(verb, strings.TrimSpace(arg)); err != nil {
			return fmt.Errorf("%s:%d: %s: %v", s.File, s.Line+1+i, line, err)
		}
	}
	if n == 0 {
		return fmt.Errorf("%s: expect step has no expectation", s.Where())
	}
	return nil
}

// VerbNames lists expectation verbs.
func VerbNames() []string {
	verbsMu.RLock()
	defer verbsMu.RUnlock()
	var out []string
	for k := range verbs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (expectKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	o := r.Last(s.Attrs["of"])
	if o == nil {
		return fail("nothing to check yet (of=%q)", s.Attrs["of"])
	}
	// A blocked statement may have finished since: refresh it.
	if o.Pending {
		if sess := r.sessionFor(o.Source); sess != nil {
			if _, since, blocked := sess.blockedStmt(); blocked {
				o = &Outcome{Source: o.Source, Kind: o.Kind, Stmt: o.Stmt, Pending: true, Elapsed: time.Since(since)}
			} else if done := sess.Await(0); done != nil {
				o = done
				r.setOutcome(o)
			}
		}
	}
	res := lab.Result{Passed: true}
	var lines []string
	rowIdx := 0
	for i, line := range strings.Split(s.Body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		positive, negated := strings.CutPrefix(line, "not ")
		verb, arg, _ := strings.Cut(positive, " ")
		arg = strings.TrimSpace(arg)
		row := rowIdx
		if verb == "row" {
			rowIdx++
		}
		err := r.expectLine(o, verb, arg, negated, row)
		if err == nil && r.Lesson != nil && r.Lesson.ReplaceAnswers {
			res.Replaced = append(res.Replaced, r.replaceAnswer(o, verb, arg, negated, row, s.Line+1+i))
		}
		if err != nil {
			res.Passed = false
			lines = append(lines, sayFailMark.F(line, err.Error()))
			if res.Why == "" {
				res.Why = line + ": " + err.Error()
			}
		} else {
			lines = append(lines, sayPassMark.F(line))
		}
	}
	res.Observed = strings.Join(lines, "\n")
	return res
}

// expectLine checks one expectation line (its verb and argument, with or
// without not) against o; row is the index of a row line among the step's.
func (r *Run) expectLine(o *Outcome, verb, arg string, negated bool, row int) error {
	var err error
	if misfit := Fits(verb, arg, o.Kind); misfit != nil {
		err = &unevaluable{misfit}
	} else if verb == "row" {
		err = checkRow(o, row, arg)
	} else {
		verbsMu.RLock()
		v := verbs[verb]
		verbsMu.RUnlock()
		err = v(r, o, arg)
	}
	var un *unevaluable
	if negated && !errors.As(err, &un) {
		if err == nil {
			err = sayHolds.E(o.Text())
		} else {
			err = nil
		}
	}
	return err
}

// checkVerbArg checks at load what a verb's argument must look like, so a
// misspelt one is refused by lab check instead of failing (or, before
// `not`, passing) at run time.
func checkVerbArg(verb, arg string) error {
	f := strings.Fields(arg)
	number := func(v string) error {
		if _, err := strconv.Atoi(v); err != nil && !VarRe.MatchString(v) {
			return fmt.Errorf("%q is not a number", v)
		}
		return nil
	}
	switch verb {
	case "ok", "waiting":
		if arg != "" {
			return fmt.Errorf("%s takes nothing after it", verb)
		}
	case "affected", "rows", "returned", "delivered":
		if len(f) != 1 {
			return fmt.Errorf("write %s N", verb)
		}
		return number(f[0])
	case "ready", "unacked", "consumers":
		if len(f) < 1 || len(f) > 2 {
			return fmt.Errorf("write %s N or %s QUEUE N", verb, verb)
		}
		return number(f[len(f)-1])
	case "unavailable":
		if len(f) != 1 {
			return fmt.Errorf("write unavailable QUEUE")
		}
	case "confirm":
		if len(f) != 1 || !slices.Contains([]string{"ack", "nack", "timeout", "unknown", "none"}, f[0]) {
			return fmt.Errorf("write confirm ack|nack|timeout|unknown|none")
		}
	case "header":
		if len(f) == 0 {
			return fmt.Errorf("write header NAME [VALUE]")
		}
		if err := headerName(f[0]); err != nil {
			return err
		}
	case "elapsed":
		if len(f) != 2 || (f[0] != ">=" && f[0] != "<") {
			return fmt.Errorf("write elapsed >= 1s or elapsed < 5s")
		}
		d, err := time.ParseDuration(f[1])
		if err != nil {
			return fmt.Errorf("%q is not a duration", f[1])
		}
		if d <= 0 {
			return fmt.Errorf("every statement takes %s or more, so this comes out the same whatever the server did; name a time the answer could miss", f[1])
		}
	case "fact", "error", "value", "contains", "tags", "redelivered":
		if arg == "" {
			return fmt.Errorf("%s needs an argument", verb)
		}
	}
	return nil
}

func (r *Run) sessionFor(source string) *Session {
	name, ok := strings.CutPrefix(source, "sql ")
	if !ok {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessions[name]
}

func verbOK(_ *Run, o *Outcome, _ string) error {
	if o.Pending {
		return fmt.Errorf("still waiting")
	}
	if o.ErrCode != "" {
		return fmt.Errorf("got %s", o.ErrText)
	}
	return nil
}

func verbError(_ *Run, o *Outcome, arg string) error {
	if o.Pending {
		return sayStillWaitingNoErr.E()
	}
	if o.ErrCode != arg {
		if o.ErrCode == "" {
			return fmt.Errorf("no error")
		}
		return fmt.Errorf("got %s", o.ErrText)
	}
	return nil
}

func verbAffected(_ *Run, o *Outcome, arg string) error {
	n, err := strconv.ParseInt(arg, 10, 64)
	if err != nil {
		return cannot("affected wants a number")
	}
	if o.ErrCode != "" || o.Pending {
		return sayNotComplete.E(o.Text())
	}
	if o.Affected != n {
		return fmt.Errorf("%d rows affected", o.Affected)
	}
	return nil
}

func verbRows(_ *Run, o *Outcome, arg string) error {
	n, err := strconv.Atoi(arg)
	if err != nil {
		return cannot("rows wants a number")
	}
	if len(o.Rows) != n {
		return fmt.Errorf("%d rows", len(o.Rows))
	}
	return nil
}

func verbValue(_ *Run, o *Outcome, arg string) error {
	if len(o.Rows) == 0 || len(o.Rows[0]) == 0 {
		return sayNoRows.E()
	}
	if o.Rows[0][0] != arg {
		return fmt.Errorf("value is %s", o.Rows[0][0])
	}
	return nil
}

func checkRow(o *Outcome, i int, arg string) error {
	if i >= len(o.Rows) {
		return sayOnlyRows.E(len(o.Rows))
	}
	want := strings.Split(arg, "|")
	got := o.Rows[i]
	if len(want) != len(got) {
		return fmt.Errorf("row has %d columns: %s", len(got), strings.Join(got, " | "))
	}
	for j := range want {
		if strings.TrimSpace(want[j]) != got[j] {
			return fmt.Errorf("row is %s", strings.Join(got, " | "))
		}
	}
	return nil
}

func verbWaiting(_ *Run, o *Outcome, _ string) error {
	if !o.Pending {
		return sayNotWaiting.E(o.Text())
	}
	return nil
}

func verbElapsed(_ *Run, o *Outcome, arg string) error {
	op, ds, ok := strings.Cut(arg, " ")
	d, err := time.ParseDuration(strings.TrimSpace(ds))
	if !ok || err != nil {
		return cannot("write elapsed >= 1s or elapsed < 5s")
	}
	switch op {
	case ">=", ">":
		if o.Elapsed < d {
			return fmt.Errorf("elapsed %s", o.Elapsed.Round(time.Millisecond))
		}
	case "<", "<=":
		if o.Elapsed > d {
			return fmt.Errorf("elapsed %s", o.Elapsed.Round(time.Millisecond))
		}
	default:
		return cannot("unknown comparison %q", op)
	}
	return nil
}

func verbFact(_ *Run, o *Outcome, arg string) error {
	k, v, _ := strings.Cut(arg, " ")
	got, ok := o.Extra[k]
	if !ok {
		return cannot("no fact %q", k)
	}
	if got != strings.TrimSpace(v) {
		return fmt.Errorf("%s is %s", k, got)
	}
	return nil
}

func verbContains(r *Run, o *Outcome, arg string) error {
	arg = r.containsText(arg)
	if !strings.Contains(o.Text(), arg) {
		return sayNotIn.E(o.Text())
	}
	return nil
}

// containsText is what contains looks for: written with the article's
// Redis keys (lab:...), checked against what was sent, where the
// learner's namespace is in the keys a program prints.
func (r *Run) containsText(arg string) string {
	if r != nil && r.Env != nil && r.Env.Svc != nil {
		arg = labKeyRe.ReplaceAllStringFunc(arg, r.RedisKey)
	}
	return arg
}

// labKeyRe finds the lab's Redis key prefix in an expectation.
var labKeyRe = regexp.MustCompile(`\blab:`)

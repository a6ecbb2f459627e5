// Package steps is the lab's step vocabulary: what each fenced block kind in
// a lesson does when it runs, and the Run that carries a lesson's state
// (SQL sessions, workers, the last outcome) from one step to the next.
//
// Every kind is in one table (kinds.go), where a name used twice does not
// compile; each kind's code lives in a file of its part (sql.go, amqp_*.go,
// worker.go, …), and what a kind keeps between the steps of a run is a
// typed field of runState.
package steps

import (
	"context"
	"fmt"
	"github.com/rmlab/lab/internal/broker"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/internal/node"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Kind is one step kind.
type Kind interface {
	// Check validates a step when the lesson loads, so a malformed lesson
	// fails with file:line before anything runs.
	Check(s *lab.Step) error
	// Run executes the step. It must honour ctx and never block longer than
	// the step's own timeout: a statement blocked on a lock is left running
	// in the background and reported as waiting.
	Run(ctx context.Context, r *Run, s *lab.Step) lab.Result
}

// Env is what every run of every lesson shares.
type Env struct {
	Svc    *services.Services
	Binary string // the lab binary, for worker processes
	Replay bool   // shorten leases; no learner at the keys
	// Queues reads queue state at the broker for the queue panel and the
	// ledger; the broker package provides it (nil until wired).
	Queues func(ctx context.Context, names []string) ([]lab.QueueStat, error)
	// MaxWorkers caps the worker processes one run may have alive (a
	// workshop's per-participant limit); 0 is no cap.
	MaxWorkers int
	// Nodes keeps lab-owned nodes between runs in this namespace (the
	// options of one lesson's choice); nil stops them with each run.
	Nodes *NodeShelf
	// Programs gives a challenge step the learner's program and keeps its
	// verdicts (the screen: what they set with p). Nil where the screen
	// must run no program of theirs — a workshop over SSH — and the step
	// says how to run the challenge on their own machine instead.
	Programs ProgramStore
}

// ProgramStore is where the learner's challenge programs are kept.
type ProgramStore interface {
	// Program is the command set for a challenge (nil: none yet), the
	// folder it runs in, and the seed of its next run.
	Program(challenge string) (argv []string, dir string, seed uint64)
	// Ran keeps a run's verdict.
	Ran(challenge string, seed uint64, passed bool, summary string)
}

// Outcome is what the last step produced, for expect steps to check.
type Outcome struct {
	Source   string     // "sql main", "redis", "worker c1", ...
	Stmt     string     // the last statement or command
	Columns  []string   // result columns
	Rows     [][]string // result rows, as text ("NULL" for NULL)
	Affected int64
	ErrCode  string // "1062", or a kind-specific word ("timeout", "nack")
	ErrText  string
	Pending  bool // still blocked (a lock wait)
	Elapsed  time.Duration
	Extra    map[string]string // kind-specific facts, checked with "fact KEY VALUE"
	// Kind is the step kind that left the outcome (its shape in the truth
	// table of expect_kinds.go); Shown is what that step showed, for an
	// outcome with no table and no statement text of its own (a publish,
	// a declare, an ack): contains searches it.
	Kind  string
	Shown string
}

// Run is one execution of one lesson, from its reset to its end, under one
// combination of choices.
type Run struct {
	Env     *Env
	Lesson  *lab.Lesson
	Choices map[string]string // choice name → option taken
	// Predictions are the learner's picks at predict steps (name → option);
	// they never choose a path. Replay leaves them empty: the step then
	// takes the article's answer.
	Predictions map[string]string
	Workers     worker.Group
	// Short shortens the lesson's waits as replay does (${lease:30} → 3):
	// the screen's re-run of a reopened lesson, and everything after it in
	// that run, so the state rebuilt fast stays consistent.
	Short bool
	// lastSQL is when the run's last statement, or last step, ended
	// (settleTrxCache).
	lastSQL time.Time

	mu       sync.Mutex
	sessions map[string]*Session
	last     *Outcome
	byName   map[string]*Outcome // last outcome per source
	st       runState            // what step kinds keep between steps
	stepKind string              // the kind of the step running, for setOutcome
	vars     map[string]string   // ${name} values set by steps (setVar)
	cleanups []func()
	// replacing is set while an answer-replaced check runs (replace.go).
	replacing *replacing
	Ledgers   []lab.Ledger
	// panel holds the screen's queue-panel connections to the run's own
	// nodes, by URL, across polls: a poll that dialled anew and closed
	// after was cut mid-handshake on a loaded machine, every time.
	panel map[string]*broker.Client
}

// NewRun starts a run of lesson l with the given choices.
func NewRun(env *Env, l *lab.Lesson, choices map[string]string) *Run {
	if choices == nil {
		choices = map[string]string{}
	}
	if env != nil {
		env.Nodes.prepare(env, l)
	}
	r := &Run{Env: env, Lesson: l, Choices: choices, Predictions: map[string]string{}, sessions: map[string]*Session{},
		byName: map[string]*Outcome{}}
	r.DecideFromServer()
	return r
}

// runState is what the step kinds keep between the steps of one run, a
// typed field each; Close (and so a reset) clears it.
type runState struct {
	amqp        *amqpState                // channels, connections, the fault proxy
	nodes       *node.Set                 // RabbitMQ nodes of the lab's own
	chaos       *ChaosLive                // the chaos runs, for the screen
	chaosRuns   map[string]*chaos.Summary // the newest run of each pipeline
	workerShown map[string]*int           // output lines of each worker already shown
}

// shownOf is how many of worker name's output lines a wait has shown.
func (r *Run) shownOf(name string) *int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.workerShown == nil {
		r.st.workerShown = map[string]*int{}
	}
	n, ok := r.st.workerShown[name]
	if !ok {
		n = new(int)
		r.st.workerShown[name] = n
	}
	return n
}

// onClose registers cleanup to run when the run ends or resets.
func (r *Run) onClose(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

// setOutcome records what a step produced.
func (r *Run) setOutcome(o *Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.Kind == "" {
		o.Kind = r.stepKind
	}
	r.last = o
	if o.Source != "" {
		r.byName[o.Source] = o
	}
}

// Last returns the last outcome, or the last from source when source != "".
func (r *Run) Last(source string) *Outcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	if source != "" {
		return r.byName[source]
	}
	return r.last
}

// Close kills every worker, rolls back and closes every session and runs
// registered cleanups. Safe to call twice.
func (r *Run) Close() {
	r.Workers.KillAll()
	r.mu.Lock()
	sess := r.sessions
	r.sessions = map[string]*Session{}
	cl := r.cleanups
	r.cleanups = nil
	r.st = runState{}
	r.vars = nil
	panel := r.panel
	r.panel = nil
	r.mu.Unlock()
	for _, c := range panel {
		c.Close()
	}
	for _, s := range sess {
		s.Close()
	}
	for i := len(cl) - 1; i >= 0; i-- {
		cl[i]()
	}
}

// setVar makes ${name} expand to value in this run's later steps (e.g. the
// address a fault proxy listens on). A choice of the same name wins.
func (r *Run) setVar(name, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vars == nil {
		r.vars = map[string]string{}
	}
	r.vars[name] = value
}

// Applies reports whether a step runs under this run's choices: a step with
// when=CHOICE:OPTION[,OPTION] runs only when that option was taken.
func (r *Run) Applies(s *lab.Step) bool {
	w, ok := s.Attrs["when"]
	if !ok {
		return true
	}
	return r.AppliesWhen(w)
}

// AppliesWhen reports whether when=CHOICE:OPTION[,OPTION] holds on this
// run's path (a step's, or a paragraph's: lab.PathOf).
func (r *Run) AppliesWhen(w string) bool {
	name, opts, _ := strings.Cut(w, ":")
	r.mu.Lock()
	taken := r.Choices[name]
	r.mu.Unlock()
	for _, o := range strings.Split(opts, ",") {
		if o == taken {
			return true
		}
	}
	return false
}

// BuiltinVars are the ${name}s steps set as a run goes (setVar): the SMS
// provider's address once a wait saw it listening, the fault proxy's once a
// proxy step started it. Any other ${name} is a choice of the lesson;
// ${name:N} is N seconds.
var BuiltinVars = []string{providerVar, proxyVar}

// VarRe matches a well-formed ${name} or ${name:N}.
var VarRe = varRe

var varRe = regexp.MustCompile(`\$\{([a-z][a-z0-9-]*)(?::([0-9]+))?\}`)

// Expand substitutes ${choice-name} with the option taken and ${lease:N}
// (any ${name:N}) with N seconds, shortened in replay, so the text shown is
// the text sent.
func (r *Run) Expand(s string) string {
	return varRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRe.FindStringSubmatch(m)
		if sub[2] != "" {
			n, _ := strconv.Atoi(sub[2])
			if r.shortWaits() {
				n = shortSeconds(n)
			}
			return strconv.Itoa(n)
		}
		if v, ok := r.Choices[sub[1]]; ok {
			return v
		}
		r.mu.Lock()
		v, ok := r.vars[sub[1]]
		r.mu.Unlock()
		if ok {
			return v
		}
		return m
	})
}

// shortWaits reports whether this run's waits are replay's short ones.
func (r *Run) shortWaits() bool { return r.Short || (r.Env != nil && r.Env.Replay) }

// shortSeconds is how replay shortens the article's waits of tens of seconds.
func shortSeconds(n int) int {
	if n <= 2 {
		return n
	}
	s := n / 10
	if s < 2 {
		s = 2
	}
	return s
}

// offline are the kinds that run with no services (a screen opened with
// none, a test): every other kind fails with the reason instead.
var offline = map[string]bool{"sleep": true, "choice": true, "predict": true, "expect": true, "show": true, "ledger": true}

// Step runs one step: the choice filter, expansion, the kind, and the result
// bookkeeping every kind shares.
func (r *Run) Step(ctx context.Context, s *lab.Step) lab.Result {
	if !r.Applies(s) {
		return lab.Result{Kind: s.Kind, Passed: true, Skipped: true, Line: s.Line,
			Why: sayNotOnPath.F(s.Attrs["when"])}
	}
	k, ok := Lookup(s.Kind)
	if !ok {
		return lab.Result{Kind: s.Kind, Line: s.Line, Why: "unknown step kind " + s.Kind}
	}
	if (r.Env == nil || r.Env.Svc == nil) && !offline[s.Kind] {
		return lab.Result{Kind: s.Kind, Line: s.Line, Why: "no services: this step talks to MySQL, RabbitMQ or Redis, which the lab is not connected to (see lab doctor)"}
	}
	x := *s
	x.Body = r.Expand(s.Body)
	x.Attrs = map[string]string{}
	for k, v := range s.Attrs {
		x.Attrs[k] = r.Expand(v)
	}
	start := time.Now()
	r.mu.Lock()
	r.stepKind = s.Kind
	before := r.last
	r.mu.Unlock()
	res := k.Run(ctx, r, &x)
	// Any step may have let a worker commit (a wait until it paused after
	// its claim): the InnoDB transaction cache must be old enough after it
	// too, not only after the run's own statements (settleTrxCache).
	r.touchSQL()
	r.mu.Lock()
	if o := r.last; o != nil && o != before && o.Kind != "sql" && o.Columns == nil && res.Observed != "" {
		o.Shown = res.Observed
	}
	r.stepKind = ""
	r.mu.Unlock()
	res.Kind, res.Line = s.Kind, s.Line
	res.DurationMS = time.Since(start).Milliseconds()
	if res.Elapsed == 0 {
		res.Elapsed = time.Since(start)
	}
	if len(r.Choices) > 0 {
		var parts []string
		for k, v := range r.Choices {
			parts = append(parts, k+"="+v)
		}
		sort.Strings(parts)
		res.Option = strings.Join(parts, ",")
	}
	if res.Ledger != nil {
		r.mu.Lock()
		r.Ledgers = append(r.Ledgers, *res.Ledger)
		r.mu.Unlock()
	}
	return res
}

// fail builds a failed result.
func fail(format string, args ...any) lab.Result {
	return lab.Result{Why: fmt.Sprintf(format, args...)}
}

// attrDuration parses a duration attribute ("5s", "500ms", "2") or returns def.
func attrDuration(s *lab.Step, key string, def time.Duration) (time.Duration, error) {
	v, ok := s.Attrs[key]
	if !ok || v == "" {
		return def, nil
	}
	v = unexpanded(v)
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %s=%q is not a duration (write 5s or 500ms)", s.Where(), key, v)
	}
	return d, nil
}

// unexpanded is a value as lab check reads it, before any run: ${wait:10}
// is 10 (the screen's figure); a choice's ${name} stays as written.
func unexpanded(v string) string {
	return varRe.ReplaceAllStringFunc(v, func(m string) string {
		if sub := varRe.FindStringSubmatch(m); sub[2] != "" {
			return sub[2]
		}
		return m
	})
}

// checkAttrs rejects attributes a kind does not know, with file:line.
func checkAttrs(s *lab.Step, allowed ...string) error {
	ok := map[string]bool{"when": true, "label": true}
	for _, a := range allowed {
		ok[a] = true
	}
	for k := range s.Attrs {
		if !ok[k] {
			return fmt.Errorf("%s: %s step has unknown attribute %q%s; allowed: %s", s.Where(), s.Kind, k,
				Suggest(k, append(allowed, "when", "label")), strings.Join(append(allowed, "when", "label"), ", "))
		}
	}
	return nil
}

// requireAttrs rejects a step missing an attribute.
func requireAttrs(s *lab.Step, keys ...string) error {
	for _, k := range keys {
		if s.Attrs[k] == "" {
			return fmt.Errorf("%s: %s step needs %s=...", s.Where(), s.Kind, k)
		}
	}
	return nil
}

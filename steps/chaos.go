package steps

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/chaos"
)

func init() {
	registerSource("chaos", chaosSource)
}

// chaosKind runs `lab chaos` inside a lesson: the whole pipeline under a
// seeded fault schedule, its workers in the workers panel, its timeline on
// the screen while it runs, and the checker's counts as facts and ledger
// figures.
//
//	```chaos pipeline=safe seed=7 orders=200 duration=8s
//	```
type chaosKind struct{}

var chaosAttrs = []string{"pipeline", "seed", "orders", "duration", "faults", "relays", "consumers", "every"}

func (chaosKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, chaosAttrs...); err != nil {
		return err
	}
	attrs := map[string]string{}
	for k, v := range s.Attrs {
		if !strings.Contains(v, "${") { // a choice's option: checked when it runs
			attrs[k] = v
		}
	}
	if _, err := chaosOptions(attrs); err != nil {
		return fmt.Errorf("%s: chaos %v", s.Where(), err)
	}
	return nil
}

// chaosOptions reads a chaos step's attributes (choices expanded).
func chaosOptions(attrs map[string]string) (chaos.Options, error) {
	o := chaos.Options{Seed: 1, Orders: 200, Duration: 8 * time.Second}
	var err error
	if v := attrs["pipeline"]; v != "" {
		if o.Pipeline, err = chaos.PipelineNamed(v); err != nil {
			return o, err
		}
	}
	if o.Faults, err = chaos.ParseFaults(attrs["faults"]); err != nil {
		return o, err
	}
	ints := map[string]*int{"orders": &o.Orders, "relays": &o.Relays, "consumers": &o.Consumers}
	for k, p := range ints {
		if v, ok := attrs[k]; ok {
			if *p, err = strconv.Atoi(v); err != nil || *p < 1 {
				return o, fmt.Errorf("%s=%q: write a whole number ≥ 1", k, v)
			}
		}
	}
	if v, ok := attrs["seed"]; ok {
		if o.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return o, fmt.Errorf("seed=%q: write a whole number", v)
		}
	}
	durs := map[string]*time.Duration{"duration": &o.Duration, "every": &o.Every}
	for k, p := range durs {
		if v, ok := attrs[k]; ok {
			if *p, err = time.ParseDuration(v); err != nil {
				return o, fmt.Errorf("%s=%q: write a duration such as 8s", k, v)
			}
		}
	}
	o.Defaults()
	return o, o.Validate()
}

// ChaosLive is what the screen draws while a chaos step runs and after:
// the run in progress (nil between runs) and the summaries so far.
type ChaosLive struct {
	mu      sync.Mutex
	current *chaos.Run
	done    []*chaos.Summary
}

// Now is the run in progress (nil when none) and the finished ones.
func (c *ChaosLive) Now() (*chaos.Run, []*chaos.Summary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current, append([]*chaos.Summary(nil), c.done...)
}

// Chaos is the run's chaos state, for the screen; nil when the lesson has
// run no chaos step yet.
func (r *Run) Chaos() *ChaosLive {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.chaos
}

func (chaosKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	o, err := chaosOptions(s.Attrs) // Step has expanded the choices
	if err != nil {
		return fail("%v", err)
	}
	if r.Env.Binary == "" {
		return fail("no lab binary to start workers with")
	}
	if max := r.Env.MaxWorkers; max > 0 && r.Workers.Live()+1+o.Relays+o.Consumers > max {
		return fail("this chaos run starts %d worker processes and %d are running; this lab allows %d (a workshop's per-participant cap)",
			1+o.Relays+o.Consumers, r.Workers.Live(), max)
	}
	o.Namespace, o.Binary = r.Env.Svc.Config.Namespace, r.Env.Binary
	cfg := r.Env.Svc.Config
	cfg.AMQP = r.brokerURL()
	run, err := chaos.New(cfg, o, nil, &r.Workers)
	if err != nil {
		return fail("%v", err)
	}
	live := r.chaosLive()
	live.mu.Lock()
	live.current = run
	live.mu.Unlock()
	sum, err := run.Execute(ctx)
	live.mu.Lock()
	live.current = nil
	if sum != nil {
		live.done = append(live.done, sum)
	}
	live.mu.Unlock()
	if err != nil {
		return fail("%v", err)
	}
	r.mu.Lock()
	if r.st.chaosRuns == nil {
		r.st.chaosRuns = map[string]*chaos.Summary{}
	}
	r.st.chaosRuns[sum.Pipeline] = sum // the newest run of a pipeline counts
	r.mu.Unlock()
	r.setOutcome(chaosOutcome(sum))
	verdict := sayEveryInvariant.F()
	if !sum.OK() {
		verdict = strings.Join(sum.Violations, "; ")
	}
	sent := fmt.Sprintf("lab chaos --pipeline %s --seed %d --orders %d --duration %s --relays %d --consumers %d",
		sum.Pipeline, sum.Seed, o.Orders, o.Duration, o.Relays, o.Consumers)
	obs := sayChaosLine.F(
		sum.Committed, sum.Once, sum.Lost, sum.Twice, sum.Absorbed, len(sum.Schedule), sum.LatencyP99, verdict)
	// Every fault as it landed: the Chaos panel has room for the newest
	// few, the step's output keeps them all.
	for _, f := range sum.Timeline.Faults {
		what := string(f.Kind) + " " + f.Target
		if f.Point != "" {
			what += " @" + f.Point
		}
		obs += "\n" + sayChaosFaultLine.F(float64(f.T)/1000, what, f.Result)
	}
	return lab.Result{Passed: true, Sent: []string{sent}, Observed: obs}
}

func chaosOutcome(s *chaos.Summary) *Outcome {
	faults := 0
	for _, n := range s.Faults {
		faults += n
	}
	facts := map[string]string{"committed": strconv.Itoa(s.Committed), "once": strconv.Itoa(s.Once), "lost": strconv.Itoa(s.Lost),
		"twice": strconv.Itoa(s.Twice), "absorbed": strconv.Itoa(s.Absorbed), "unsent": strconv.Itoa(s.Unsent),
		"dead": strconv.Itoa(s.Dead), "faults": strconv.Itoa(faults), "verdict": map[bool]string{true: "pass", false: "fail"}[s.OK()]}
	o := &Outcome{Source: "chaos " + s.Pipeline, Stmt: "lab chaos --pipeline " + s.Pipeline, Columns: []string{"figure", "value"}, Extra: facts}
	for _, k := range []string{"committed", "once", "lost", "twice", "absorbed", "unsent", "dead", "faults", "verdict"} {
		o.Rows = append(o.Rows, []string{k, facts[k]})
	}
	for _, f := range s.Timeline.Faults {
		o.Rows = append(o.Rows, []string{fmt.Sprintf("%.2fs %s %s", float64(f.T)/1000, f.Kind, f.Target), f.Result})
	}
	return o
}

// chaosSource reads a chaos run's figure: chaos: FIGURE PIPELINE (the
// newest run of that pipeline), FIGURE one of committed, applied (orders
// applied at least once), once, lost, twice, absorbed, published.
func chaosSource(ctx context.Context, r *Run, s *lab.Step, expr string) (int, error) {
	f := strings.Fields(expr)
	if len(f) != 2 {
		return 0, fmt.Errorf("chaos: %q: write chaos: FIGURE PIPELINE (FIGURE: committed, applied, once, lost, twice, absorbed, published)", expr)
	}
	r.mu.Lock()
	sum := r.st.chaosRuns[f[1]]
	r.mu.Unlock()
	if sum == nil {
		return 0, fmt.Errorf("chaos: no chaos step of pipeline %s has run in this lesson", f[1])
	}
	switch f[0] {
	case "committed":
		return sum.Committed, nil
	case "once":
		return sum.Once, nil
	case "applied":
		return sum.Once + sum.Twice, nil
	case "lost":
		return sum.Lost, nil
	case "twice":
		return sum.Twice, nil
	case "absorbed":
		return sum.Absorbed, nil
	case "published":
		return sum.Published, nil
	}
	return 0, fmt.Errorf("chaos: %q: FIGURE is one of committed, applied, once, lost, twice, absorbed, published", f[0])
}

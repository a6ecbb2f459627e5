package steps

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/programs"
	"github.com/rmlab/lab/internal/programs/provider"
	"github.com/rmlab/lab/internal/worker"
)

// spawnKind starts a worker: a separate `lab worker PROGRAM` process.
//
//	```spawn name=c1 program=consumer pause-at=after-mark-commit
//	--strategy mark-first --event event-001
//	```
//
// The body holds the program's flags (whitespace separated).
type spawnKind struct{}

// Programs are the worker programs a spawn step can start, each with the
// pause points it announces (declared beside its code).
var Programs = programs.Points()

// programNames lists Programs, sorted.
func programNames() []string { return programs.Names() }

func (spawnKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "name", "program", "pause-at"); err != nil {
		return err
	}
	if err := requireAttrs(s, "name", "program"); err != nil {
		return err
	}
	prog := s.Attrs["program"]
	points, ok := Programs[prog]
	if !ok {
		return fmt.Errorf("%s: spawn program=%s is not a worker program%s; use one of %s", s.Where(), prog,
			Suggest(prog, programNames()), strings.Join(programNames(), ", "))
	}
	for _, pt := range SplitList(s.Attrs["pause-at"]) {
		if !strings.Contains(pt, "${") && !slices.Contains(points, pt) { // with a ${choice}: the loader checks each option
			return fmt.Errorf("%s: spawn pause-at=%s: %s never pauses there%s; its points are %s (lab worker %s --help)",
				s.Where(), pt, prog, Suggest(pt, points), strings.Join(points, ", "), prog)
		}
	}
	return nil
}

func (spawnKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	if r.Env.Binary == "" {
		return fail("no lab binary to start workers with")
	}
	if max := r.Env.MaxWorkers; max > 0 && r.Workers.Live() >= max {
		return fail("%d worker processes are already running, this lab's limit (a workshop's per-participant cap); kill or stop one first", max)
	}
	if old := r.Workers.Get(s.Attrs["name"]); old != nil {
		if st := old.Status(); st.State == worker.Running || st.State == worker.Paused {
			return fail("worker %s is still %s; kill or stop it first", old.Name, st.State)
		}
	}
	spec := worker.Spec{Binary: r.Env.Binary, Kind: s.Attrs["program"], Name: s.Attrs["name"],
		PauseAt: SplitList(s.Attrs["pause-at"]), Args: strings.Fields(s.Body), Env: append(r.Env.Svc.Config.Env(), "LAB_AMQP_URL="+r.brokerURL())}
	if r.shortWaits() {
		spec.Env = append(spec.Env, "LAB_REPLAY=1")
	}
	p, err := worker.Start(spec)
	if err != nil {
		return fail("%v", err)
	}
	r.Workers.Add(p)
	*r.shownOf(p.Name) = 0 // a new process: all of its output is new
	cmd := fmt.Sprintf("lab worker %s --name %s", spec.Kind, spec.Name)
	if len(spec.PauseAt) > 0 {
		cmd += " --pause-at " + strings.Join(spec.PauseAt, ",")
	}
	if len(spec.Args) > 0 {
		cmd += " " + strings.Join(spec.Args, " ")
	}
	st := p.Status()
	r.setOutcome(workerOutcome(p))
	return lab.Result{Passed: true, Sent: []string{cmd}, Observed: sayStarted.F(spec.Name, st.PID)}
}

func workerOutcome(p *worker.Process) *Outcome {
	st := p.Status()
	o := &Outcome{Source: "worker " + p.Name, Stmt: p.Name,
		Columns: []string{"output"}, Rows: rowsOf(p.Output()),
		Extra: map[string]string{"state": string(st.State), "point": st.Point, "pid": strconv.Itoa(st.PID)}}
	// A worker still running has no exit code: "fact exit 0" must not pass
	// on one.
	if st.State == worker.Exited {
		o.Extra["exit"] = strconv.Itoa(st.ExitCode)
	}
	return o
}

func rowsOf(lines []string) [][]string {
	out := make([][]string, len(lines))
	for i, l := range lines {
		out[i] = []string{l}
	}
	return out
}

func (r *Run) worker(s *lab.Step) (*worker.Process, error) {
	name := s.Attrs["worker"]
	p := r.Workers.Get(name)
	if p == nil {
		return nil, sayNoWorker.E(name)
	}
	return p, nil
}

// waitKind waits until a worker pauses at (or passes) a point, or exits.
//
//	```wait worker=c1 until=after-mark-commit [timeout=20s]
//	```
type waitKind struct{}

func (waitKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "worker", "until", "timeout", "times", "exit"); err != nil {
		return err
	}
	if err := requireAttrs(s, "worker", "until"); err != nil {
		return err
	}
	if v, ok := s.Attrs["exit"]; ok {
		if s.Attrs["until"] != "exit" {
			return fmt.Errorf("%s: wait exit=%s checks an exit code: it goes with until=exit", s.Where(), v)
		}
		if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 255 {
			return fmt.Errorf("%s: wait exit=%q: write the exit code the worker must end with, 0 to 255", s.Where(), v)
		}
	}
	_, err := attrDuration(s, "timeout", 0)
	return err
}

func (waitKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	p, err := r.worker(s)
	if err != nil {
		return fail("%v", err)
	}
	timeout, _ := attrDuration(s, "timeout", 30*time.Second)
	c, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	until := s.Attrs["until"]
	// Everything the worker printed that no earlier wait showed, not only
	// what it prints from now: an expect after this step checks the whole
	// output, and the learner must have seen what it checks.
	shown := r.shownOf(p.Name)
	before := *shown
	switch {
	case until == "exit":
		_, err = p.WaitExit(c)
	case slices.Contains(p.PauseAt, until):
		err = p.WaitPaused(c, until)
	default:
		n, _ := strconv.Atoi(s.Attr("times", "1"))
		err = p.WaitReached(c, until, n)
	}
	o := workerOutcome(p)
	r.setOutcome(o)
	st := p.Status()
	out := p.Output()
	r.learnAddress(p, out)
	if before > len(out) {
		before = 0 // a new process under the same name: its output is new
	}
	*shown = len(out)
	obs := strings.Join(out[before:], "\n")
	if obs != "" {
		obs += "\n"
	}
	switch st.State {
	case worker.Paused:
		obs += sayPaused.F(p.Name, st.Point, st.PID)
	case worker.Exited:
		obs += sayExited.F(p.Name, st.ExitCode)
	default:
		obs += sayStateAt.F(p.Name, st.State, st.Point)
	}
	if err != nil {
		return lab.Result{Observed: obs, Why: waitWhy(p.Name, until, timeout, st, err)}
	}
	// A worker that ended with another code than the lesson says (0 unless
	// exit=N) did not do what the lesson shows: a bad flag, a crash.
	if until == "exit" {
		want, _ := strconv.Atoi(s.Attr("exit", "0"))
		if st.ExitCode != want {
			return lab.Result{Observed: obs, Why: sayExitNot.F(p.Name, st.ExitCode, want, want)}
		}
	}
	return lab.Result{Passed: true, Observed: obs}
}

// killKind sends SIGKILL: the process dies where it is, no cleanup runs.
//
//	```kill worker=c1
//	```
type killKind struct{}

func (killKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "worker"); err != nil {
		return err
	}
	return requireAttrs(s, "worker")
}

func (killKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	p, err := r.worker(s)
	if err != nil {
		return fail("%v", err)
	}
	st := p.Status()
	switch st.State {
	case worker.Killed:
		// The learner killed it by hand (k on the Workers panel, as the
		// key bar invites): what this step would do is done; say so and
		// let the lesson go on.
		r.setOutcome(workerOutcome(p))
		return lab.Result{Passed: true, Observed: sayAlreadyKilled.F(p.Name, st.Point)}
	case worker.Exited:
		return fail("worker %s already exited with code %d: there is nothing left to kill (did the lesson wait for the wrong point?)", p.Name, st.ExitCode)
	}
	if err := p.Kill(); err != nil {
		return fail("%v", err)
	}
	r.setOutcome(workerOutcome(p))
	return lab.Result{Passed: true, Sent: []string{fmt.Sprintf("kill -KILL %d", st.PID)},
		Observed: sayKilled.F(p.Name, st.PID, st.Point)}
}

// resumeKind lets a paused worker go on; with settle=D it waits up to D for
// the worker to pause again or end, and what it printed meanwhile is the
// outcome an expect reads (a fault-removed mutant resumes a worker so, in
// place of its kill: what it would have done is done before the next step).
//
//	```resume worker=c1 [settle=10s]
//	```
type resumeKind struct{}

func (resumeKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "worker", "settle"); err != nil {
		return err
	}
	if _, err := attrDuration(s, "settle", 0); err != nil {
		return err
	}
	return requireAttrs(s, "worker")
}

func (resumeKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	p, err := r.worker(s)
	if err != nil {
		return fail("%v", err)
	}
	pt := p.Status().Point
	if err := p.Continue(); err != nil {
		return fail("%v", err)
	}
	obs := sayGoesOn.F(p.Name, pt)
	if d, _ := attrDuration(s, "settle", 0); d > 0 {
		shown := r.shownOf(p.Name)
		before := *shown
		c, cancel := context.WithTimeout(ctx, d)
		p.WaitStopped(c) // still running after d: a worker that goes on for long, fine
		cancel()
		r.setOutcome(workerOutcome(p))
		// What it printed meanwhile, and where it is now: the learner sees
		// what an expect after this step checks.
		out := p.Output()
		if before > len(out) {
			before = 0
		}
		*shown = len(out)
		if more := strings.Join(out[before:], "\n"); more != "" {
			obs += "\n" + more
		}
		switch st := p.Status(); st.State {
		case worker.Paused:
			obs += "\n" + sayPaused.F(p.Name, st.Point, st.PID)
		case worker.Exited:
			obs += "\n" + sayExited.F(p.Name, st.ExitCode)
		default:
			obs += "\n" + sayStateAt.F(p.Name, st.State, st.Point)
		}
	}
	return lab.Result{Passed: true, Observed: obs}
}

// stopKind asks a worker to stop gracefully (SIGTERM), killing it after 5s.
type stopKind struct{}

func (stopKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "worker"); err != nil {
		return err
	}
	return requireAttrs(s, "worker")
}

func (stopKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	p, err := r.worker(s)
	if err != nil {
		return fail("%v", err)
	}
	if err := p.Terminate(5 * time.Second); err != nil {
		return fail("%v", err)
	}
	o := workerOutcome(p)
	r.setOutcome(o)
	return lab.Result{Passed: true, Observed: sayStopped.F(p.Name, o.Extra["state"], o.Extra["exit"])}
}

// providerVar is ${provider}: the SMS provider's base URL, which only the
// provider knows (it listens on a free port, so learners sharing a machine
// never collide) and logs when it starts listening.
const providerVar = "provider"

// learnAddress offers a provider worker's logged address to later steps.
func (r *Run) learnAddress(p *worker.Process, out []string) {
	if p.Kind != "provider" {
		return
	}
	for _, l := range out {
		if _, addr, ok := strings.Cut(l, provider.ListeningPrefix); ok {
			r.setVar(providerVar, strings.TrimSpace(addr))
		}
	}
}

// waitWhy says what a wait waited for and what it saw instead: under load
// the question is whether the worker never got there or got somewhere else.
func waitWhy(name, until string, timeout time.Duration, st worker.Status, err error) string {
	point := orNone(st.Point)
	cause := ""
	if !errors.Is(err, context.DeadlineExceeded) {
		cause = err.Error()
	}
	switch {
	case until == "exit" && cause == "":
		return sayWaitExit.F(timeout, name, st.State, point)
	case until == "exit":
		return sayWaitExitErr.F(timeout, name, st.State, point, cause)
	case cause == "":
		return sayWaitReach.F(timeout, name, until, st.State, point)
	}
	return sayWaitReachErr.F(timeout, name, until, st.State, point, cause)
}

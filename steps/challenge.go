package steps

import (
	"context"
	"fmt"
	"strings"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/challenge"
)

// challengeKind runs the learner's program as a challenge's consumer or
// relay (package challenge), under the challenge's fault schedule, its
// timeline in the chaos panel while it runs; the verdict and the
// explanation of each order that went wrong are the step's output, and the
// step passes only when the challenge does.
//
//	```challenge name=once
//	```
type challengeKind struct{}

func (challengeKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "name", "lang"); err != nil {
		return err
	}
	if _, err := challenge.Named(s.Attr("lang", "en"), s.Attr("name", "")); err != nil {
		return fmt.Errorf("%s: %v", s.Where(), err)
	}
	return nil
}

func (challengeKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	c, err := challenge.Named(s.Attr("lang", "en"), s.Attr("name", ""))
	if err != nil {
		return fail("%v", err)
	}
	if r.Env.Programs == nil {
		return fail("this screen runs no program of yours (a workshop's server runs nothing a participant gives it). "+
			"Run the challenge on your own machine, and give the room its verdict through the workshop's SSH door: lab challenge run %s --workshop YOU@HOST:PORT -- CMD ARGS", c.Name)
	}
	argv, dir, seed := r.Env.Programs.Program(c.Name)
	if len(argv) == 0 {
		return fail("no program set for %s yet: press p and give the command that runs yours (for a start: lab challenge init %s --lang go ./%s, then go run ./%s)",
			c.Name, c.Name, c.Name, c.Name)
	}
	if r.Env.Binary == "" {
		return fail("no lab binary to start the lab's own workers with")
	}
	cfg := r.Env.Svc.Config
	cfg.AMQP = r.brokerURL()
	argv = challenge.Command(argv)
	run, err := challenge.New(cfg, c, challenge.Options{Seed: seed, Command: argv, Dir: dir,
		Namespace: cfg.Namespace, Binary: r.Env.Binary, Workers: &r.Workers})
	if err != nil {
		return fail("%v", err)
	}
	if max := r.Env.MaxWorkers; max > 0 && r.Workers.Live()+1+run.O.Relays+run.O.Consumers > max {
		return fail("this run starts %d processes and %d are running; this lab allows %d", 1+run.O.Relays+run.O.Consumers, r.Workers.Live(), max)
	}
	if err := challenge.Warm(ctx, argv, nil); err != nil {
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
	r.setOutcome(chaosOutcome(sum))
	line := sayChallengeLine.F(sum.Seed, sum.Committed, sum.Once, sum.Lost, sum.Twice)
	r.Env.Programs.Ran(c.Name, sum.Seed, sum.OK(), line)
	var b strings.Builder
	b.WriteString(line + "\n")
	for _, v := range sum.Violations {
		b.WriteString("violation: " + v + "\n")
	}
	for _, w := range sum.Why {
		b.WriteString(w.Text())
	}
	if !sum.OK() {
		// Each copy's last lines across all its lives, and how they ended.
		for _, name := range run.Copies() {
			lines := run.Hist.LastLines(name)
			ex := run.Exits(name)
			if len(lines) == 0 && ex == "" {
				continue
			}
			b.WriteString(name)
			if ex != "" {
				b.WriteString(" (its lives ended: " + ex + ")")
			}
			if len(lines) == 0 {
				b.WriteString(" wrote nothing\n")
				continue
			}
			b.WriteString(" last wrote:\n")
			for _, l := range lines[max(0, len(lines)-5):] {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	res := lab.Result{Passed: sum.OK(), Sent: []string{fmt.Sprintf("lab challenge run %s --seed %d -- %s", c.Name, sum.Seed, strings.Join(argv, " "))},
		Observed: strings.TrimRight(b.String(), "\n")}
	if sum.OK() {
		res.Observed += "\n" + sayChallengePassedLine.F(sum.Seed, sum.Seed+1)
	} else {
		res.Why = sayChallengeFailed.F(strings.Join(sum.Violations, "; "))
	}
	return res
}

// chaosLive is the run's chaos state for the screen, made on first use.
func (r *Run) chaosLive() *ChaosLive {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.chaos == nil {
		r.st.chaos = &ChaosLive{}
	}
	return r.st.chaos
}

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"github.com/rmlab/lab/internal/catalog"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/internal/plain"
)

const chaosUsage = `usage: lab chaos [--seed S] [--orders N] [--duration D] [--relays R] [--consumers C]
                 [--faults all|KIND,...] [--every D] [--pipeline safe|NAME] [--quiet D]
                 [--json FILE] [--history FILE] [--report FILE.html] [--schedule]
                 [--mysql DSN] [--amqp URL] [--namespace NS]

Places N orders through the outbox over D (the article's transaction, one
producer process), moves them with R relays and C consumers (the lessons'
worker processes) to an account per order, and meanwhile injects a fault
about every --every, drawn from the seed: SIGKILL of a relay, consumer or
the producer at a named point or a random moment; a dropped confirm or a cut
connection through the AMQP proxy; a relay paused past its lease; a broker
restart on a node of the lab's own; a cut MySQL session. Killed processes are
started again. After the schedule everything drains (at most --quiet), then
the checker reads MySQL and the broker: how many times each committed order
was applied (0 lost, 2+ twice), duplicates absorbed, events unsent or DEAD,
commit-to-applied latency. Exit 0 only when no order was lost or applied
twice and nothing was left unsent.

fault kinds: %s
pipelines:
%s
--schedule prints the fault schedule the seed gives and exits: the same seed
always gives the same schedule. It runs in namespace chaos unless
--namespace names another, dropping and recreating that namespace's outbox
and idempotency databases and its queue orders.
`

func chaosHelp() string {
	var kinds []string
	for _, k := range chaos.FaultKinds {
		kinds = append(kinds, string(k))
	}
	var ps []string
	for _, p := range chaos.Pipelines {
		ps = append(ps, fmt.Sprintf("  %-20s %s", p.Name, p.About))
	}
	return fmt.Sprintf(chaosUsage, strings.Join(kinds, ", "), strings.Join(ps, "\n"))
}

// cmdChaos is `lab chaos ...`.
func cmdChaos(args []string, stdout, stderr io.Writer) int {
	out := catalog.Writer(catalog.LangOf(stderr), stdout) // the report; --json - gets stdout as it is
	var g globals
	fs := flag.NewFlagSet("lab chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, chaosHelp()) }
	g.flags(fs)
	var o chaos.Options
	fs.Uint64Var(&o.Seed, "seed", 1, "the seed of the fault schedule")
	fs.IntVar(&o.Orders, "orders", 500, "orders to place")
	fs.DurationVar(&o.Duration, "duration", 10*time.Second, "how long the schedule runs; the orders are placed across it")
	fs.IntVar(&o.Relays, "relays", 2, "relay processes")
	fs.IntVar(&o.Consumers, "consumers", 2, "consumer processes")
	faults := fs.String("faults", "all", "fault kinds, separated by commas")
	fs.DurationVar(&o.Every, "every", time.Second, "mean time between faults")
	pipeline := fs.String("pipeline", "safe", "the pipeline under test")
	fs.DurationVar(&o.Quiet, "quiet", 40*time.Second, "at most this long to drain after the schedule")
	jsonFile := fs.String("json", "", "write the summary as JSON to FILE (- for stdout)")
	historyFile := fs.String("history", "", "write the history as JSON lines to FILE")
	reportFile := fs.String("report", "", "write the timeline and counts as a self-contained HTML page to FILE")
	only := fs.Bool("schedule", false, "print the fault schedule and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if stopAfterParse(fs) {
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lab chaos: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	var err error
	if o.Faults, err = chaos.ParseFaults(*faults); err != nil {
		fmt.Fprintf(stderr, "lab chaos: %v\n", err)
		return 2
	}
	if o.Pipeline, err = chaos.PipelineNamed(*pipeline); err != nil {
		fmt.Fprintf(stderr, "lab chaos: %v\n", err)
		return 2
	}
	if err := o.Validate(); err != nil {
		fmt.Fprintf(stderr, "lab chaos: %v\n", err)
		return 2
	}
	cfg := g.cfg.FromEnv()
	o.Namespace = cfg.Namespace
	if o.Namespace == "" {
		o.Namespace = "chaos"
	}
	if err := cfg.Validate(); err != nil {
		printErr(stderr, err)
		return 2
	}
	o.Binary = binary()
	var hw io.Writer
	if *historyFile != "" {
		f, err := os.Create(*historyFile)
		if err != nil {
			fmt.Fprintf(stderr, "lab chaos: --history: %v\n", err)
			return 2
		}
		defer f.Close()
		hw = f
	}
	hist := chaos.NewHistory(hw)
	r, err := chaos.New(cfg, o, hist, nil)
	if err != nil {
		fmt.Fprintf(stderr, "lab chaos: %v\n", err)
		return 2
	}
	printSchedule(out, r)
	if *only {
		return 0
	}
	ctx, stop := stopContext()
	defer stop()
	s, err := r.Execute(ctx)
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	printSummary(out, s)
	if code := writeSummary(s, *jsonFile, *reportFile, "lab chaos", stdout, stderr); code != 0 {
		return code
	}
	if !s.OK() {
		return 1
	}
	return 0
}

func sorted(s []string) []string { slices.Sort(s); return s }

func printSchedule(w io.Writer, r *chaos.Run) {
	o := r.O
	fmt.Fprintf(w, "chaos: seed %d, pipeline %s, %d orders over %s, %d relays, %d consumers, a fault about every %s\n",
		o.Seed, o.Pipeline.Name, o.Orders, o.Duration, o.Relays, o.Consumers, o.Every)
	for _, n := range r.Notes {
		fmt.Fprintf(w, "chaos: %s\n", n)
	}
	fmt.Fprintf(w, "schedule (%d faults):\n", len(r.Plan))
	must := false
	for _, f := range r.Plan {
		mark := " "
		if f.Must {
			mark, must = "!", true
		}
		fmt.Fprintf(w, " %s%s\n", mark, f)
	}
	if must {
		fmt.Fprintln(w, "  (! a fault your program cannot survive unless it is right: every seed plays each, and a run where one found no moment to land in is no pass)")
	}
}

func printSummary(w io.Writer, s *chaos.Summary) {
	fmt.Fprintf(w, "\n%s  pipeline %s, seed %d, on %s\n", s.Verdict(), s.Pipeline, s.Seed, s.Broker)
	fmt.Fprintf(w, "  orders committed %d of %d; applied once %d, lost %d, twice %d\n", s.Committed, s.Orders, s.Once, s.Lost, s.Twice)
	if s.Wrong > 0 {
		fmt.Fprintf(w, "  applied with a wrong amount %d\n", s.Wrong)
	}
	if s.OwnRole == "consumer" { // the program's own: the lab sees only what it applied
		fmt.Fprintf(w, "  publishes %d; unsent %d, DEAD %d, left in the queue %d\n", s.Published, s.Unsent, s.Dead, s.InQueue)
	} else {
		fmt.Fprintf(w, "  duplicates absorbed by the consumer %d; publishes %d; unsent %d, DEAD %d, left in the queue %d\n",
			s.Absorbed, s.Published, s.Unsent, s.Dead, s.InQueue)
	}
	if s.Conflicts > 0 {
		fmt.Fprintf(w, "  conflicts recorded in consumed_conflict: %d of %d orders with a conflicting repeat\n", s.Conflicts-s.ConflictsMissed, s.Conflicts)
	}
	fmt.Fprintf(w, "  commit to applied: p50 %.1f ms, p99 %.1f ms, max %.1f ms; %.1f orders/s; %s in all, drain %s\n",
		s.LatencyP50, s.LatencyP99, s.LatencyMax, s.OrdersPerSecond, s.Elapsed, s.Drain)
	var fk []string
	for _, k := range chaos.AllKinds() {
		if n := s.Faults[k]; n > 0 {
			fk = append(fk, fmt.Sprintf("%s %d", k, n))
		}
	}
	missed := 0
	for _, n := range s.Missed {
		missed += n
	}
	fmt.Fprintf(w, "  faults: %s (%d found nothing to hit)\n", strings.Join(fk, ", "), missed)
	var rs []string
	for name, n := range s.Restarts {
		if n > 0 {
			rs = append(rs, fmt.Sprintf("%s %d", name, n))
		}
	}
	if len(rs) > 0 {
		fmt.Fprintf(w, "  restarts: %s\n", strings.Join(sorted(rs), ", "))
	}
	for _, f := range s.Timeline.Faults {
		target := f.Target
		if f.Point != "" {
			target += " at " + f.Point
		}
		mark := " "
		if f.Must {
			mark = "!" // one the program must survive: it must land
		}
		fmt.Fprintf(w, "  %s %6.2fs %-14s %s: %s\n", mark, float64(f.T)/1000, f.Kind, target, f.Result)
	}
	for _, v := range s.Violations {
		fmt.Fprintf(w, "  violation: %s\n", v)
	}
	for _, n := range s.Refused {
		fmt.Fprintf(w, "  refused: %s\n", n)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// writeSummary writes a run's summary as JSON (--json, "-" for stdout) and
// its HTML page (--report); 2 when either cannot be written.
func writeSummary(s *chaos.Summary, jsonFile, reportFile, cmd string, stdout, stderr io.Writer) int {
	if jsonFile != "" {
		b, _ := json.MarshalIndent(s, "", "  ")
		b = plain.JSON(b) // a program's lines are in it
		if jsonFile == "-" {
			stdout.Write(append(b, '\n'))
		} else if err := os.WriteFile(jsonFile, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "%s: --json: %v\n", cmd, err)
			return 2
		}
	}
	if reportFile != "" {
		f, err := os.Create(reportFile)
		if err == nil {
			err = chaos.Report(f, s)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "%s: --report: %v\n", cmd, err)
			return 2
		}
	}
	return 0
}

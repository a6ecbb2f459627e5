package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/rmlab/lab/internal/bench"
	"github.com/rmlab/lab/internal/workshop"
)

const benchUsage = `usage: lab bench relay --events N --workers W [--batch B] [--no-skip-locked] [--no-pipeline]
                     [--db-latency 500us] [--claim-hold 2ms] [--rounds 3] [--json]
                     [--mysql DSN] [--amqp URL] [--namespace NS]

Pushes N outbox events through W relays (the lab's relay, as goroutines) into a
real queue and reports events/s and commit→SENT latency, then publishes N
messages of the same shape from W publishers with up to B confirms outstanding
and no database: the ratio of the two rates is the cost of the outbox itself.
The claim SELECT's mean time, lock waits included, shows what plain FOR
UPDATE (--no-skip-locked) makes a relay wait for.
--db-latency D puts the relays (only them) behind an in-process proxy that
delays every packet by D each way, as a database in another rack would;
--claim-hold D keeps every claim transaction open D longer (a slow commit).
It creates blog_outbox_lab_NSbench and the queue bench.relay_NSbench, and drops
both at the end.
`

const benchWorkshopUsage = `usage: lab bench workshop --sessions N [--lesson ID] [--keys K] [--pace D] [--room [--watch]] [--json]
                        [--mysql DSN] [--amqp URL] [--redis ADDR]

Serves the lab over SSH in this process, as lab serve does, and opens N real
SSH sessions that each walk a lesson by pressing enter K times, D apart (its
real steps and worker processes run); reports p50/p99 of the time from each
key to the server's next output, CPU (one process: server and clients, plus
the workers), peak memory and peak live workers. Each session is namespace
bwsXXXXi; their databases are dropped at the end.
`

// cmdBench is `lab bench relay ...` or `lab bench workshop ...`.
func cmdBench(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "workshop" {
		return cmdBenchWorkshop(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "relay" {
		fmt.Fprint(stderr, benchUsage)
		return 2
	}
	var g globals
	fs := flag.NewFlagSet("lab bench relay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchUsage) }
	g.flags(fs)
	var o bench.Options
	fs.IntVar(&o.Events, "events", 10000, "events to push through the relays")
	fs.IntVar(&o.Workers, "workers", 4, "relays (and baseline publishers)")
	fs.IntVar(&o.Batch, "batch", 100, "events per claim (and confirms outstanding per publisher)")
	noSkip := fs.Bool("no-skip-locked", false, "claim with plain FOR UPDATE")
	fs.BoolVar(&o.NoPipeline, "no-pipeline", false, "each relay claims, publishes and marks strictly in turn")
	fs.DurationVar(&o.DBLatency, "db-latency", 0, "relays reach the database through a proxy adding this one-way delay (each statement costs 2×), e.g. 500us")
	fs.DurationVar(&o.ClaimHold, "claim-hold", 0, "keep each claim transaction open this long (synthetic; see --db-latency), e.g. 2ms")
	fs.DurationVar(&o.Poll, "poll", 20*time.Millisecond, "relays' idle wait")
	fs.IntVar(&o.Rounds, "rounds", 3, "relay and baseline runs, alternated (medians reported)")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if stopAfterParse(fs) {
		return 0
	}
	o.SkipLocked = !*noSkip
	if err := g.cfg.FromEnv().Validate(); err != nil {
		printErr(stderr, err)
		return 2
	}
	o.Progress = func(s string) { fmt.Fprintln(stderr, "lab bench:", s) }
	ctx, stop := stopContext()
	defer stop()
	res, err := bench.Run(ctx, g.cfg, o)
	if err != nil {
		printErr(stderr, err)
		return 1
	}
	return printResult(stdout, res, *jsonOut)
}

func cmdBenchWorkshop(args []string, stdout, stderr io.Writer) int {
	var g globals
	fs := flag.NewFlagSet("lab bench workshop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchWorkshopUsage) }
	g.flags(fs)
	var o workshop.BenchOptions
	fs.IntVar(&o.Sessions, "sessions", 10, "SSH sessions at once")
	fs.StringVar(&o.Lesson, "lesson", "idem-separate-transactions", "the lesson each session walks (it runs workers)")
	fs.IntVar(&o.Keys, "keys", 20, "keys each session presses")
	fs.DurationVar(&o.Pace, "pace", 500*time.Millisecond, "time between a session's keys")
	fs.BoolVar(&o.Room, "room", false, "keep the sessions in a room (claims and heartbeats in MySQL)")
	fs.BoolVar(&o.Watch, "watch", false, "with a room: an instructor watches the first participant all along")
	jsonOut := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if stopAfterParse(fs) {
		return 0
	}
	if err := g.cfg.FromEnv().Validate(); err != nil {
		printErr(stderr, err)
		return 2
	}
	o.Binary = binary()
	ctx, stop := stopContext()
	defer stop()
	res, err := workshop.Bench(ctx, g.cfg, o)
	if err != nil {
		printErr(stderr, err)
		return 1
	}
	return printResult(stdout, res, *jsonOut)
}

// printResult prints a benchmark's result as JSON or as its one line.
func printResult(stdout io.Writer, res fmt.Stringer, asJSON bool) int {
	if asJSON {
		if err := printJSON(stdout, res); err != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintln(stdout, res)
	return 0
}

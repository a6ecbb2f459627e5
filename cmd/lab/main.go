// Command lab is the reliable-messaging lab: an interactive screen, a
// non-interactive replay for CI, a doctor, and the worker processes lessons
// start and kill. This file only parses flags and wires packages together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/broker"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/programs"
	"github.com/rmlab/lab/secret"
	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/steps"
	"github.com/rmlab/lab/ui"
	"github.com/rmlab/lab/worker"
)

const usage = `lab — the reliable-messaging lab

usage:
  lab [flags]                      open the screen at the first lesson (or where you left off)
  lab open ID [flags]              open the screen at lesson ID
  lab list [flags]                 list lessons with their numbers and ids
  lab replay [ID ...|--all|FILE.md] [--json] [--junit FILE] [--transcript FILE] [--lang en|zh] [--parallel N] [--strict]
                                   run lessons with no terminal; exit 1 if any expectation fails;
                                   N lessons side by side, each in a namespace of its own (NS_rK);
                                   a lesson that skipped a check is SKIPPED, and with --strict
                                   (the default when $CI is set) that fails the run too
  lab replay --mutate N [--seed S] [ID ...|--all]
                                   N mutants of each lesson (one expected value changed, one path):
                                   each must fail at its change; exit 1 if one passes (SURVIVED)
  lab check [FILE|DIR ...]         every problem in lesson files (default: the built-in lessons), no server needed
  lab doctor [flags]               server versions, capabilities, which lessons can run
  lab clean [--namespace NS | --all-namespaces]
                                   drop what the lab created in a namespace (only what carries its mark)
  lab bench relay --events N --workers W [--batch B] [--no-skip-locked] [--json]
                                   outbox relay throughput and latency against a no-database baseline
  lab bench workshop --sessions N [--lesson ID] [--keys K] [--json]
                                   N real SSH sessions walking a lesson: key-to-frame p50/p99, CPU, memory
  lab chaos [--seed S] [--orders N] [--duration D] [--pipeline safe|NAME] [--faults LIST] [--json FILE] [--report FILE.html]
                                   the whole pipeline under a seeded fault schedule; a checker says lost / twice
  lab serve [--listen ADDR] [--seats N] [--password-env VAR] [--participant-keys FILE] [--room NAME]
                                   the screen over SSH for a workshop: ssh -p 2222 alice@HOST
  lab room --room NAME [--goto N [--to NAME]] [--say TEXT] [--end NAME] [--reset NAME] [--timer D|off] [--log] [--json|--csv]
                                   a workshop room: each participant's lesson, step, time on it, failures,
                                   verdicts, the class's predict answers; steer everyone (or one) on every server
  lab worker KIND [...]            a worker process (lessons start these)

flags (every command):
  --mysql DSN        MySQL/MariaDB, go-sql-driver form (env LAB_MYSQL_DSN; default root@tcp(127.0.0.1:3306)/)
  --amqp URL         RabbitMQ (env LAB_AMQP_URL; default amqp://guest:guest@127.0.0.1:5672/)
  --redis ADDR       Redis (env LAB_REDIS_ADDR; default 127.0.0.1:6379)
  --management URL   RabbitMQ's management API (env LAB_MANAGEMENT_URL; default the AMQP host, port 15672)
  --namespace NS     add _NS to every database, exchange and queue (env LAB_NAMESPACE)
  --lessons DIR      load lessons from DIR instead of the built-in ones
  --lang en|zh       lesson language (default en)
  --broker-control rabbitmqctl   let lessons restart the local RabbitMQ node (env LAB_RABBITMQCTL names another rabbitmqctl)
  --no-docker        never start containers
`

// Everything the lab prints goes through secret.Writer: no path, however
// an error was built, prints a password the lab was given.
func main() { os.Exit(run(os.Args[1:], secret.Writer(os.Stdout), secret.Writer(os.Stderr))) }

type globals struct {
	cfg     services.Config
	lessons string
	lang    string
}

func (g *globals) flags(fs *flag.FlagSet) {
	fs.StringVar(&g.cfg.MySQL, "mysql", "", "MySQL DSN")
	fs.StringVar(&g.cfg.AMQP, "amqp", "", "AMQP URL")
	fs.StringVar(&g.cfg.Redis, "redis", "", "Redis address")
	fs.StringVar(&g.cfg.Management, "management", "", "management API URL")
	fs.StringVar(&g.cfg.Namespace, "namespace", "", "namespace suffix")
	fs.StringVar(&g.cfg.BrokerControl, "broker-control", "", "rabbitmqctl")
	fs.BoolVar(&g.cfg.NoDocker, "no-docker", false, "never start containers")
	fs.StringVar(&g.lessons, "lessons", "", "lesson directory")
	fs.StringVar(&g.lang, "lang", "en", "en or zh")
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "worker":
		return programs.Run(args)
	case "bench":
		return cmdBench(args, stdout, stderr)
	case "serve":
		return cmdServe(args, stdout, stderr)
	case "chaos":
		return cmdChaos(args, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	var g globals
	fs := flag.NewFlagSet("lab "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	g.flags(fs)
	jsonOut := fs.Bool("json", false, "replay: print the JSON report on stdout")
	junit := fs.String("junit", "", "replay: write JUnit XML to FILE")
	transcript := fs.String("transcript", "", "replay: write a Markdown transcript to FILE")
	all := fs.Bool("all", false, "replay: every lesson")
	parallel := fs.Int("parallel", 0, "replay: lessons side by side (0: the default for this machine)")
	// CI must not count a lesson that checked less than it claims as green.
	mutate := fs.Int("mutate", 0, "replay: N mutants of each lesson instead of the lessons; each must fail where it was changed")
	seed := fs.Uint64("seed", 0, "replay --mutate: which mutants (0: drawn from the clock, printed)")
	strict := fs.Bool("strict", os.Getenv("CI") != "", "replay: a lesson that skipped a check fails the run (the default when $CI is set)")
	allNamespaces := fs.Bool("all-namespaces", false, "clean: every namespace that has a lab database")
	var rf roomFlags
	fs.StringVar(&rf.name, "room", "", "room: the workshop room to show")
	fs.StringVar(&rf.gotoLesson, "goto", "", "room: send participants to this lesson (number or id)")
	fs.StringVar(&rf.to, "to", "", "room: only this participant (with --goto or --say)")
	fs.StringVar(&rf.say, "say", "", "room: a line for every participant's status bar")
	fs.StringVar(&rf.end, "end", "", "room: end this participant's session")
	fs.StringVar(&rf.reset, "reset", "", "room: end this participant's session, clean their namespace and forget their progress")
	fs.BoolVar(&rf.log, "log", false, "room: the room's log (logins, refusals, ends, commands)")
	fs.BoolVar(&rf.csv, "csv", false, "room: the participants as CSV, for the debrief")
	fs.StringVar(&rf.timer, "timer", "", "room: a countdown on every status line (10m; off takes it away)")
	if err := fs.Parse(interleave(args)); err != nil {
		return 2
	}
	if g.lang != "en" && g.lang != "zh" {
		fmt.Fprintf(stderr, "lab: --lang %q: use en or zh\n", g.lang)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch cmd {
	case "list":
		return cmdList(g, fs.Args(), stdout, stderr)
	case "check":
		return cmdCheck(fs.Args(), stdout, stderr)
	case "doctor":
		return cmdDoctor(ctx, g, stdout, stderr)
	case "clean":
		return cmdClean(ctx, g, *allNamespaces, stdout, stderr)
	case "room":
		rf.json = *jsonOut
		return cmdRoom(ctx, g, rf, stdout, stderr)
	case "replay":
		return cmdReplay(ctx, g, fs.Args(), replayFlags{all: *all, json: *jsonOut, junit: *junit, transcript: *transcript, parallel: *parallel, strict: *strict, mutate: *mutate, seed: *seed}, stdout, stderr)
	case "", "open":
		start := ""
		if cmd == "open" {
			if fs.NArg() != 1 {
				fmt.Fprintln(stderr, "lab open: name one lesson id (see `lab list`)")
				return 2
			}
			start = fs.Arg(0)
		}
		return cmdScreen(ctx, g, start, stderr)
	}
	fmt.Fprintf(stderr, "lab: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// interleave lets flags follow positional arguments (lab replay ID --json).
func interleave(args []string) []string {
	var flags, pos []string
	boolFlags := map[string]bool{"json": true, "all": true, "no-docker": true, "all-namespaces": true, "strict": true, "log": true, "csv": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && !boolFlags[name] && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

func loadLessons(g globals) ([]*lab.Lesson, error) {
	if g.lessons != "" {
		return labs.LoadDir(g.lessons, g.lang)
	}
	return labs.Builtin(g.lang)
}

// partialLoad splits a load's error: the files it left out (the other
// lessons are usable), or nil when the whole load failed.
func partialLoad(err error) labs.FileErrors {
	var fe labs.FileErrors
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}

func cmdList(g globals, args []string, stdout, stderr io.Writer) int {
	ls, err := loadLessons(g)
	if err != nil && partialLoad(err) == nil {
		fmt.Fprintln(stderr, "lab:", err)
		return 1
	}
	part := lab.Part("")
	for _, l := range ls {
		if l.Part != part {
			part = l.Part
			fmt.Fprintf(stdout, "\n%s\n", part)
		}
		mark := ""
		if l.ExplainOnly {
			mark = "  [explain-only]"
		}
		fmt.Fprintf(stdout, "  %2d  %-28s %s%s\n", l.Number, l.ID, l.Title, mark)
	}
	if err != nil { // the files left out, after the list
		printErr(stderr, err)
		return 1
	}
	return 0
}

func connect(ctx context.Context, g globals, stderr io.Writer, strict bool) (*services.Services, int) {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	svc, err := services.Connect(c, g.cfg, strict)
	if err != nil {
		printErr(stderr, err)
		return nil, 1
	}
	for _, s := range svc.Info.Started {
		fmt.Fprintf(stderr, "lab: started %s with Docker (it stops when the lab exits)\n", s)
	}
	return svc, 0
}

func printErr(w io.Writer, err error) {
	type joined interface{ Unwrap() []error }
	var j joined
	if errors.As(err, &j) {
		for _, e := range j.Unwrap() {
			fmt.Fprintf(w, "lab: %v\n", e)
		}
		return
	}
	fmt.Fprintf(w, "lab: %v\n", err)
}

// binary starts the lessons' worker processes: lab-worker beside this
// binary when it is from the same build, else this binary.
func binary() string {
	exe, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return worker.Beside(exe)
}

func cmdScreen(ctx context.Context, g globals, start string, stderr io.Writer) int {
	en, err := loadLessons(g)
	if err != nil && (partialLoad(err) == nil || len(en) == 0) {
		printErr(stderr, err)
		return 1
	} // else the screen opens with the rest and names the files it left out
	if start != "" && labs.Find(en, start) == nil {
		fmt.Fprintf(stderr, "lab open: no lesson %q (see `lab list`)\n", start)
		return 2
	}
	svc, code := connect(ctx, g, stderr, true)
	if svc == nil {
		return code
	}
	defer svc.Close()
	// The shelf boots a lesson's own RabbitMQ nodes while the learner reads
	// its first paragraphs, and keeps them for the next option of its choice.
	env := &steps.Env{Svc: svc, Binary: binary(), Queues: broker.QueueReader(svc), Nodes: &steps.NodeShelf{}}
	defer env.Nodes.Close()
	if err := ui.Run(ctx, ui.Options{Env: env, Lang: g.lang, LessonsDir: g.lessons, Start: start}); err != nil {
		printErr(stderr, err)
		return 1
	}
	return 0
}

// Command lab is the reliable-messaging lab: an interactive screen, a
// non-interactive replay for CI, a doctor, and the worker processes lessons
// start and kill. This file only parses flags and wires packages together.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/rmlab/lab/internal/catalog"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/challenge"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/programs"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
	"github.com/rmlab/lab/ui"
)

const usage = `lab — the reliable-messaging lab

usage:
  lab [flags]                      open the screen at the first lesson (or where you left off)
  lab open ID [flags]              open the screen at lesson ID
  lab list [flags]                 list lessons with their numbers and ids
  lab replay [ID ...|--all|FILE.md] [--json] [--junit FILE] [--transcript FILE] [--lang en|zh] [--parallel N] [--strict] [--as-participant]
                                   run lessons with no terminal; exit 1 if any expectation fails;
                                   N lessons side by side, each in a namespace of its own (NS_rK);
                                   a lesson that skipped a check is SKIPPED, and with --strict
                                   (the default when $CI is set) that fails the run too
  lab replay --mutate N [--kind K] [--seed S] [ID ...|--all]
                                   N mutants of each kind of each lesson, one path each: an expected
                                   value changed (must fail there), a fault taken out (must fail
                                   after it); exit 1 if one passes (SURVIVED)
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
  lab challenge list|contract|init|hint|run NAME [--seed S] -- CMD ARGS…
                                   you write the consumer or the relay (any language); the lab runs it under
                                   faults and explains each order lost or applied twice
  lab serve [--listen ADDR] [--seats N] [--password-file FILE] [--participant-keys FILE] [--room NAME]
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
  --containers       start MySQL, RabbitMQ and Redis in containers even where local ones answer (env LAB_CONTAINERS=1);
                     --containers=rabbitmq,redis (LAB_CONTAINERS=rabbitmq,redis) only those, the rest found as usual;
                     they are removed when the lab exits (DOCKER_HOST names the engine)
`

// Everything the lab prints goes through secret.Writer: no path, however
// an error was built, prints a password the lab was given.
func main() {
	// What the lab was started with beyond 0, 1 and 2 stays its own.
	worker.CloseOnExec()
	// Passwords are masked first, as written (plain text would no longer
	// match one holding a character it removes), then the line is made
	// plain: the lab's own output holds no escape, so whatever outside
	// text a line quotes (a row, a server's log, a program's status)
	// reaches the terminal plain, whichever path brought it. The screen
	// writes to the terminal itself.
	os.Exit(run(os.Args[1:], terminal(readerAware(os.Stdout)), terminal(readerAware(os.Stderr))))
}

// terminal is what the lab's output passes on its way to w.
func terminal(w io.Writer) io.Writer { return secret.Writer(plain.Writer(w)) }

type globals struct {
	cfg     services.Config
	lessons string
	lang    string
	help    bool // the arguments ask for the usage (-h): it is printed whole
}

func (g *globals) flags(fs *flag.FlagSet) {
	fs.StringVar(&g.cfg.MySQL, "mysql", "", "MySQL DSN")
	fs.StringVar(&g.cfg.AMQP, "amqp", "", "AMQP URL")
	fs.StringVar(&g.cfg.Redis, "redis", "", "Redis address")
	fs.StringVar(&g.cfg.Management, "management", "", "management API URL")
	fs.StringVar(&g.cfg.Namespace, "namespace", "", "namespace suffix")
	fs.StringVar(&g.cfg.BrokerControl, "broker-control", "", "rabbitmqctl")
	fs.BoolVar(&g.cfg.NoDocker, "no-docker", false, "never start containers")
	fs.Var(&g.cfg.Containers, "containers", "start the three services (or =LIST of mysql, rabbitmq, redis) in containers")
	fs.StringVar(&g.lessons, "lessons", "", "lesson directory")
	fs.StringVar(&g.lang, "lang", "en", "en or zh")
}

func run(args []string, stdout, stderr io.Writer) int {
	defer services.StopOwnMySQL() // a lesson that read a binary log may have started one
	// A command's errors in the learner's language (--lang zh).
	stderr = catalog.Writer(langOf(args), stderr)
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
	case "challenge":
		return cmdChallenge(args, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	ctx, stop := stopContext()
	defer stop()
	switch cmd {
	case "list":
		return runList(args, stdout, stderr)
	case "check":
		return runCheck(args, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args, stdout, stderr)
	case "clean":
		return runClean(ctx, args, stdout, stderr)
	case "room":
		return runRoom(ctx, args, stdout, stderr)
	case "replay":
		return runReplay(ctx, args, stdout, stderr)
	case "", "open":
		return runScreen(ctx, cmd, args, stderr)
	}
	unknownCommand(stderr, cmd)
	return 2
}

// command is one command's own flag set: the service flags every command
// shares, then its own; -h prints its usage, and a flag another command
// takes is refused with it (lab list --goto 3 is an error).
func command(name, head string, stderr io.Writer) (*flag.FlagSet, *globals) {
	var g globals
	fs := flag.NewFlagSet("lab "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		// A learner's mistake in Chinese points to the usage instead of
		// printing it: the usage is English reference text.
		if !g.help && catalog.LangOf(stderr) != "en" {
			fmt.Fprintln(stderr, sayUsagePointer.F(fs.Name()))
			return
		}
		fmt.Fprint(stderr, head+"\nflags:\n")
		fs.PrintDefaults()
	}
	g.flags(fs)
	return fs, &g
}

// argsOnly, set by the guides' test (docs_test.go), ends a command once its
// arguments have parsed: every command a guide shows is one the lab
// accepts as written, including those too long or too costly to run there.
var argsOnly func(fs *flag.FlagSet)

// stopAfterParse reports that argsOnly took the parsed command.
func stopAfterParse(fs *flag.FlagSet) bool {
	if argsOnly == nil {
		return false
	}
	argsOnly(fs)
	return true
}

// parse parses args (flags may follow positional arguments: lab replay ID
// --json) and checks the shared ones; false with the exit code to return.
func parse(fs *flag.FlagSet, g *globals, args []string, stderr io.Writer) (int, bool) {
	g.help = helpAsked(args)
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if g.lang != "en" && g.lang != "zh" {
		fmt.Fprintf(stderr, "%s: %s\n", fs.Name(), sayBadLang.F(g.lang))
		return 2, false
	}
	if stopAfterParse(fs) {
		return 0, false
	}
	if g.lessons != "" && fs.Name() != "lab check" {
		// lab clean later names these lessons' queues in any namespace.
		_ = progress.RememberLessons(g.lessons)
	}
	return 0, true
}

// noArgs refuses positional arguments to a command that takes none, with
// its usage; hint says what to write instead.
func noArgs(fs *flag.FlagSet, stderr io.Writer, hint string) bool {
	if fs.NArg() == 0 {
		return true
	}
	fmt.Fprintln(stderr, sayNoArgs.F(fs.Name(), fmt.Sprintf("%q", fs.Args()), hint))
	fs.Usage()
	return false
}

// interleave moves flags before positional arguments, reading from fs
// which flags take no value.
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			isBool := false
			if f := fs.Lookup(name); f != nil {
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					isBool = true
				}
			}
			if !strings.Contains(name, "=") && !isBool && name != "h" && name != "help" && i+1 < len(args) {
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

func runList(args []string, stdout, stderr io.Writer) int {
	fs, g := command("list", "usage: lab list [flags]\n\nlists the lessons with their numbers and ids, by part\n", stderr)
	if code, ok := parse(fs, g, args, stderr); !ok {
		return code
	}
	if !noArgs(fs, stderr, "") {
		return 2
	}
	return cmdList(*g, stdout, stderr)
}

func cmdList(g globals, stdout, stderr io.Writer) int {
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
	// The probes bound themselves (seconds); starting containers takes
	// up to services.StartLimit.
	c, cancel := context.WithTimeout(ctx, services.StartLimit+10*time.Second)
	defer cancel()
	g.cfg.Progress = func(line string) { fmt.Fprintf(stderr, "lab: %s\n", line) }
	svc, err := services.Connect(c, g.cfg, strict)
	if err != nil {
		printErr(stderr, err)
		return nil, 1
	}
	for _, s := range svc.Info.Swept {
		fmt.Fprintf(stderr, "lab: %s\n", s)
	}
	for _, s := range svc.Info.Started {
		fmt.Fprintf(stderr, "lab: %s\n", sayInContainer.F(s))
	}
	return svc, 0
}

// unreachable are the errors of the services that did not answer.
func unreachable(svc *services.Services) []error {
	var out []error
	for _, err := range []error{svc.Info.MySQLErr, svc.Info.AMQPErr, svc.Info.RedisErr} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

func printErr(w io.Writer, err error) {
	type joined interface{ Unwrap() []error }
	var j joined
	if errors.As(err, &j) {
		for _, e := range j.Unwrap() {
			fmt.Fprintf(w, "lab: %s\n", said(w, e))
		}
		return
	}
	fmt.Fprintf(w, "lab: %s\n", said(w, err))
}

// said is err in the language w speaks (catalog.Writer): a lab.Error part
// by part, any other error as its line.
func said(w io.Writer, err error) string {
	var le *lab.Error
	if lang := catalog.LangOf(w); lang != "en" && errors.As(err, &le) && le == err {
		return le.In(func(s string) string { return catalog.In(lang, s) })
	}
	return err.Error()
}

// without is args less the first s in them.
// firstWord is the index in args of the first word that is neither a flag
// nor a flag's value (fs says which flags take one), or -1.
func firstWord(fs *flag.FlagSet, args []string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case a == "-" || !strings.HasPrefix(a, "-"):
			return i
		case strings.Contains(a, "="):
			continue
		}
		f := fs.Lookup(strings.TrimLeft(a, "-"))
		if f == nil {
			continue // a flag the screen does not know: a command's
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
			i++ // its value
		}
	}
	return -1
}

// unknownCommand says a command does not exist, then the commands (in
// English, the reference) or, in another language, where they are.
func unknownCommand(stderr io.Writer, cmd string) {
	fmt.Fprintf(stderr, "lab: %s\n\n", sayUnknownCmd.F(cmd))
	if catalog.LangOf(stderr) != "en" {
		fmt.Fprintln(stderr, sayCommandsList.F())
		return
	}
	fmt.Fprint(stderr, usage)
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

// commands are lab's commands, for the advice on flags put before one.
var commands = []string{"open", "list", "check", "doctor", "clean", "room", "replay", "serve", "chaos", "challenge", "bench", "worker", "help"}

// runScreen is `lab` and `lab open ID`: the screen.
func runScreen(ctx context.Context, cmd string, args []string, stderr io.Writer) int {
	// lab --help: every command, then the flags of lab itself (the screen).
	head := usage
	if cmd == "open" {
		head = "usage: lab open ID|N [flags]\n\nopens the screen at lesson ID (or number N, as lab list shows it)\n"
	}
	fs, g := command(cmd, head, stderr)
	// `lab --no-docker list`, `lab --lang zh replay --all`: each command has
	// its own flags, after it. Found before parsing: the command's flags
	// would be refused as the screen's.
	if i := firstWord(fs, args); cmd == "" && i >= 0 && slices.Contains(commands, args[i]) {
		rest := append(slices.Clone(args[:i]), args[i+1:]...)
		fmt.Fprintf(stderr, "lab: %s\n", sayFlagsAfter.F(args[i], strings.Join(rest, " ")))
		return 2
	}
	if code, ok := parse(fs, g, args, stderr); !ok {
		return code
	}
	start := ""
	switch {
	case cmd == "open" && fs.NArg() == 1:
		start = fs.Arg(0)
	case cmd == "open":
		fmt.Fprintln(stderr, "lab open: "+sayNameOne.F())
		return 2
	case fs.NArg() > 0:
		unknownCommand(stderr, fs.Arg(0))
		return 2
	}
	return cmdScreen(ctx, *g, start, stderr)
}

func cmdScreen(ctx context.Context, g globals, start string, stderr io.Writer) int {
	en, err := loadLessons(g)
	if err != nil && (partialLoad(err) == nil || len(en) == 0) {
		printErr(stderr, err)
		return 1
	} // else the screen opens with the rest and names the files it left out
	if start != "" && labs.Find(en, start) == nil {
		if c, cerr := challenge.Named("en", strings.TrimPrefix(start, "challenge-")); cerr == nil && g.lessons == "" {
			start = challenge.LessonID(c.Name) // the screen lists the challenges after the lessons
		} else {
			fmt.Fprintf(stderr, "lab open: %s\n", sayNoLesson.F(start))
			return 2
		}
	}
	// Only what a lesson needs blocks it: a server that does not answer
	// is said here and by each lesson that needs it (its needs unmet, as
	// lab doctor lists them); with none answering, nothing could run.
	svc, code := connect(ctx, g, stderr, false)
	if svc == nil {
		return code
	}
	defer svc.Close()
	down := unreachable(svc)
	if len(down) == 3 {
		for _, err := range down {
			printErr(stderr, err)
		}
		return 1
	}
	for _, err := range down {
		printErr(stderr, err)
		fmt.Fprintf(stderr, "lab: %s\n", sayOthersRun.F())
	}
	// The shelf boots a lesson's own RabbitMQ nodes while the learner reads
	// its first paragraphs, and keeps them for the next option of its choice.
	env := &steps.Env{Svc: svc, Binary: binary(), Queues: broker.QueueReader(svc), Nodes: &steps.NodeShelf{}}
	defer env.Nodes.Close()
	if err := ui.Run(ctx, ui.Options{Env: env, Lang: g.lang, LessonsDir: g.lessons, Start: start, RunPrograms: true}); err != nil {
		printErr(stderr, err)
		return 1
	}
	return 0
}

// printJSON writes v to w as indented JSON, with what a terminal would act
// on escaped (plain.JSON): a report carries what tables, messages and
// programs said.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(plain.JSON(b), '\n'))
	return err
}

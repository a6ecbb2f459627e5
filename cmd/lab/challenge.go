package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/rmlab/lab/internal/catalog"
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rmlab/lab/challenge"
	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/workshop"
)

const challengeUsage = `usage: lab challenge list
       lab challenge contract
       lab challenge init NAME --lang go|python DIR
       lab challenge hint NAME
       lab challenge run NAME [--seed S] [--copies N] [--duration D] [--schedule]
                              [--json FILE] [--report FILE.html] [--history FILE]
                              [--namespace NS] [--workshop NAME@HOST[:PORT]] [--room NAME --as YOU]
                              [service flags] -- CMD ARGS…

Challenges: you write the consumer or the relay, in any language, and the
lab runs it in the pipeline under faults drawn from a seed (kills at the
worst moments, cut acks and confirms, frozen relays, killed MySQL sessions),
then checks every order — applied once, lost, applied twice, conflicts
recorded, events left unsent — and explains the first ones that went wrong
from what it saw.

  list      the ladder: ✓ passed, ✗ tried and not passed yet
  contract  what the lab gives your program and what it checks
  init      write a starter (runs, and is wrong) and a README into DIR;
            here --lang is the program's language, --text en|zh the README's
  hint      the next hint (one more each time)
  run       run CMD ARGS… as the challenge's program; exit 0 only on a pass.
            "go run DIR" of a folder with its own go.mod runs as go -C DIR run .
            The run's evidence is on a MySQL server the lab starts for it;
            --shared-server keeps it on the configured one (UNPROVEN, never
            a pass). --workshop NAME@HOST[:PORT] has the workshop's server
            run and grade the challenge, your program here as its agent,
            over your own ssh (LAB_SSH_COMMAND: the ssh to run, as
            GIT_SSH_COMMAND): the room keeps the server's verdict;
            --room NAME --as YOU writes a verdict with the room's MySQL
            login, which only an instructor holds

The text is in --lang en|zh (except for init). run uses namespace challenge
unless --namespace names another, recreating its databases and queue.
`

// cmdChallenge is `lab challenge ...`.
func cmdChallenge(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, challengeUsage)
		return 0
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "list":
		return challengeList(args, stdout, stderr)
	case "contract":
		return challengeContract(args, stdout, stderr)
	case "init":
		return challengeInit(args, stdout, stderr)
	case "hint":
		return challengeHint(args, stdout, stderr)
	case "run":
		return challengeRun(args, stdout, stderr)
	}
	fmt.Fprintf(stderr, "lab challenge: %s\n", sayNoSubcommand.F(sub))
	return 2
}

// challengeFlags parses a subcommand's flags wherever they stand among its
// arguments (lab challenge init once --lang go DIR), and returns the rest.
func challengeFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func challengeProgress(g globals) (string, *progress.File) {
	cfg := g.cfg.FromEnv()
	path, err := progress.Path(cfg.Namespace, "")
	if err != nil {
		return "", progress.New()
	}
	p, _ := progress.Load(path)
	return path, p
}

func saveProgress(path string, p *progress.File) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return progress.Write(path, b)
}

func challengeList(args []string, stdout, stderr io.Writer) int {
	var g globals
	fs := flag.NewFlagSet("lab challenge list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.flags(fs)
	if rest, err := challengeFlags(fs, args); err != nil || len(rest) > 0 {
		return usageErr(stderr, "lab challenge list", err, rest)
	}
	if stopAfterParse(fs) {
		return 0
	}
	all, err := challenge.All(g.lang)
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	_, p := challengeProgress(g)
	for _, c := range all {
		mark := " "
		if r := p.Challenges[c.Name]; r != nil && r.Passed {
			mark = "✓"
		} else if r != nil && r.Runs > 0 {
			mark = "✗" // tried, not passed yet
		}
		fmt.Fprintf(stdout, "%s %d. %-14s %-8s %s\n", mark, c.Number, c.Name, c.Role, c.Title)
	}
	return 0
}

func challengeContract(args []string, stdout, stderr io.Writer) int {
	var g globals
	fs := flag.NewFlagSet("lab challenge contract", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.flags(fs)
	if rest, err := challengeFlags(fs, args); err != nil || len(rest) > 0 {
		return usageErr(stderr, "lab challenge contract", err, rest)
	}
	if stopAfterParse(fs) {
		return 0
	}
	fmt.Fprint(stdout, challenge.Contract(g.lang))
	return 0
}

func challengeInit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lab challenge init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	language := fs.String("lang", "go", "the starter's language: go or python")
	text := fs.String("text", "en", "the README's language: en or zh")
	rest, err := challengeFlags(fs, args)
	if err != nil || len(rest) != 2 {
		if err == nil {
			fmt.Fprintln(stderr, "lab challenge init: "+sayInitWhat.F())
		}
		return 2
	}
	if stopAfterParse(fs) {
		return 0
	}
	c, err := challenge.Named(*text, rest[0])
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	files, err := challenge.Init(c, *language, rest[1], c.Text)
	if err != nil {
		fmt.Fprintf(stderr, "lab challenge init: %v\n", err)
		return 2
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", f)
	}
	run := "go run " + rest[1]
	if *language == "python" {
		run = "python3 " + files[0]
	}
	fmt.Fprintf(stdout, "\nrun it:  lab challenge run %s --seed 1 -- %s\n", c.Name, run)
	return 0
}

func challengeHint(args []string, stdout, stderr io.Writer) int {
	var g globals
	fs := flag.NewFlagSet("lab challenge hint", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.flags(fs)
	rest, err := challengeFlags(fs, args)
	if err != nil || len(rest) != 1 {
		return usageErr(stderr, "lab challenge hint NAME", err, rest)
	}
	if stopAfterParse(fs) {
		return 0
	}
	c, err := challenge.Named(g.lang, rest[0])
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	path, p := challengeProgress(g)
	r := p.Challenge(c.Name)
	n := min(r.Hints+1, len(c.Hints))
	for i := 0; i < n; i++ {
		fmt.Fprintf(stdout, "hint %d of %d: %s\n\n", i+1, len(c.Hints), c.Hints[i])
	}
	if n == len(c.Hints) && r.Hints >= n {
		fmt.Fprintf(stdout, "that is every hint; the reference solutions are in the lab's source: %s\n", strings.Join(c.Solutions, ", "))
	}
	r.Hints, r.Updated = n, time.Now()
	if err := saveProgress(path, p); err != nil {
		fmt.Fprintf(stderr, "lab challenge hint: could not keep how many hints you have seen in %s: %v\n", path, err)
	}
	return 0
}

func challengeRun(args []string, stdout, stderr io.Writer) int {
	// The report in the learner's language; --json - gets stdout as it is.
	out := catalog.Writer(catalog.LangOf(stderr), stdout)
	var g globals
	fs := flag.NewFlagSet("lab challenge run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, challengeUsage) }
	g.flags(fs)
	var o challenge.Options
	fs.Uint64Var(&o.Seed, "seed", 1, "the seed of the fault schedule")
	fs.IntVar(&o.Copies, "copies", 0, "copies of your program (default: the challenge's)")
	fs.DurationVar(&o.Duration, "duration", 0, "how long the schedule runs (default: the challenge's)")
	jsonFile := fs.String("json", "", "write the verdict as JSON to FILE (- for stdout)")
	historyFile := fs.String("history", "", "write everything the lab saw as JSON lines to FILE")
	reportFile := fs.String("report", "", "write the timeline and counts as a self-contained HTML page to FILE")
	only := fs.Bool("schedule", false, "print the fault schedule and exit")
	roomName := fs.String("room", "", "a workshop room: keep the verdict there, under --as, for the instructor (needs the room's MySQL: the instructor's way)")
	workshopAt := fs.String("workshop", "", "NAME@HOST[:PORT]: give the verdict to the workshop through its SSH door, as you log in there (a participant's way)")
	as := fs.String("as", "", "with --room: your participant name in the room")
	fs.BoolVar(&o.SharedServer, "shared-server", false, "keep the run's evidence on the configured MySQL server, not one the lab starts for the run: the verdict is then unproven, never passed (an administrator's login of that server could rewrite it)")
	argv := args
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		argv, command = args[:i], args[i+1:]
	}
	rest, err := challengeFlags(fs, argv)
	if err != nil || len(rest) != 1 {
		return usageErr(stderr, "lab challenge run NAME [flags] -- CMD ARGS…", err, rest)
	}
	if stopAfterParse(fs) {
		return 0
	}
	c, err := challenge.Named(g.lang, rest[0])
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	if len(command) == 0 && !*only {
		fmt.Fprintf(stderr, "lab challenge run %s: %s\n  lab challenge run %s -- go run ./mine\n  lab challenge run %s -- python3 mine.py\n", c.Name, sayProgramAfter.F(), c.Name, c.Name)
		return 2
	}
	if len(command) == 0 {
		command = []string{"true"} // --schedule only: nothing is started
	}
	if *workshopAt != "" {
		if *roomName != "" || *as != "" || *only || *jsonFile != "" || *historyFile != "" || *reportFile != "" || o.SharedServer {
			fmt.Fprintln(stderr, "lab challenge run --workshop: the workshop's server runs the challenge and keeps its verdict; --room, --as, --schedule, --json, --history, --report and --shared-server are for a run on this machine")
			return 2
		}
		return challengeAtWorkshop(*workshopAt, c.Name, o, command, stdout, stderr)
	}
	cfg := g.cfg.FromEnv()
	if err := cfg.Validate(); err != nil {
		printErr(stderr, err)
		return 2
	}
	o.Namespace = cfg.Namespace
	if o.Namespace == "" {
		o.Namespace = "challenge"
	}
	var inRoom progress.Store
	if *roomName != "" || *as != "" {
		if *roomName == "" || *as == "" {
			fmt.Fprintln(stderr, "lab challenge run: "+sayRoomAs.F())
			return 2
		}
		if p := services.NamespaceProblem(*as); p != "" {
			fmt.Fprintf(stderr, "lab challenge run --as %s: %s\n", *as, sayNotParticipant.F(p))
			return 2
		}
		if cfg.Namespace == "" {
			// Beside the participant's own namespace, never in it: the run
			// recreates its databases and queue.
			o.Namespace = ("c_" + *as)[:min(16, 2+len(*as))]
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		store, closeRoom, err := roomStore(ctx, cfg.MySQL, *roomName, *as)
		cancel()
		if err != nil {
			printErr(stderr, err)
			return 2
		}
		defer closeRoom()
		inRoom = store
	}
	o.Binary = binary()
	o.Command = challenge.Command(command)
	o.Dir, _ = os.Getwd()
	if *historyFile != "" {
		f, err := os.Create(*historyFile)
		if err != nil {
			fmt.Fprintf(stderr, "lab challenge run: --history: %v\n", err)
			return 2
		}
		defer f.Close()
		o.History = f
	}
	r, err := challenge.New(cfg, c, o)
	if err != nil {
		fmt.Fprintf(stderr, "lab challenge run: %v\n", err)
		return 2
	}
	fmt.Fprintf(out, "challenge %d. %s (%s): your program as the %s, %d copies: %s\n", c.Number, c.Title, c.Name, c.Role,
		len(r.Copies()), strings.Join(o.Command, " "))
	if !*only {
		r.OnSetup = func(users []string) {
			for _, u := range users {
				fmt.Fprintf(out, "  it runs as %s\n", u)
			}
		}
	}
	printSchedule(out, r)
	if *only {
		return 0
	}
	ctx, stop := stopContext()
	defer stop()
	if err := challenge.Warm(ctx, o.Command, func(s string) { fmt.Fprintln(out, "  "+s) }); err != nil {
		fmt.Fprintf(stderr, "lab challenge run: %v\n", err)
		return 2
	}
	stopCounts := printCounts(out, r)
	s, err := r.Execute(ctx)
	stopCounts()
	if err != nil {
		printErr(stderr, err)
		return 2
	}
	printSummary(out, s)
	printWhy(out, s, r)
	path, p := challengeProgress(g)
	p.Keep(verdictOf(c.Name, s), time.Now())
	if s.OK() {
		fmt.Fprintf(out, "\npassed %s under seed %d. Try another seed: --seed %d\n", c.Name, s.Seed, s.Seed+1)
	} else if s.Unproven != "" && len(s.Violations) == 0 {
		fmt.Fprintf(out, "\nunproven: %s under seed %d broke no rule the lab saw, but %s\n", c.Name, s.Seed, s.Unproven)
	}
	if err := saveProgress(path, p); err != nil {
		fmt.Fprintf(stderr, "lab challenge run: could not keep the result in %s: %v\n", path, err)
	}
	if inRoom != nil {
		if err := keepInRoom(inRoom, c.Name, s); err != nil {
			fmt.Fprintf(stderr, "lab challenge run: could not keep the verdict in %s: %v\n", inRoom.Where(), err)
		} else {
			fmt.Fprintf(out, "the verdict is in %s\n", inRoom.Where())
		}
	}
	if code := writeSummary(s, *jsonFile, *reportFile, "lab challenge run", stdout, stderr); code != 0 {
		return code
	}
	if !s.OK() {
		return 1
	}
	return 0
}

// printWhy explains the orders that went wrong, and shows the last lines
// of a copy of the program that kept dying.
func printWhy(w io.Writer, s *chaos.Summary, r *chaos.Run) {
	if len(s.Why) > 0 {
		fmt.Fprintf(w, "\nwhy:\n")
		for _, y := range s.Why {
			fmt.Fprint(w, "  "+y.Text())
		}
	}
	if s.OK() {
		return
	}
	// Each copy's last lines across all its lives (the one up at the end
	// may have written nothing yet), and how its lives ended.
	for _, name := range r.Copies() {
		// One line in one write: the screen's catalog says whole lines.
		head := fmt.Sprintf("%s (started %d times)", name, s.Restarts[name]+1)
		if ex := r.Exits(name); ex != "" {
			head = fmt.Sprintf("%s; its lives ended: %s", head, ex)
		}
		lines := r.Hist.LastLines(name)
		if len(lines) == 0 {
			fmt.Fprintf(w, "\n%s; it wrote nothing\n", head)
			continue
		}
		fmt.Fprintf(w, "\n%s; its last lines:\n", head)
		for _, l := range lines[max(0, len(lines)-8):] {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
}

// printCounts prints a line a second of what the run has done so far,
// until the returned stop is called.
func printCounts(w io.Writer, r *chaos.Run) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			tl := r.Hist.Timeline()
			var sum chaos.Bucket
			for _, b := range tl.Seconds {
				sum.Committed += b.Committed
				sum.Published += b.Published
				sum.Applied += b.Applied
			}
			if tl.Phase == "setup" || tl.Phase == "" {
				continue
			}
			fmt.Fprintf(w, "  %5.1fs %-8s committed %d, published %d, applied %d, faults %d\n", r.Hist.Elapsed().Seconds(), tl.Phase,
				sum.Committed, sum.Published, sum.Applied, len(tl.Faults))
		}
	}()
	return func() { close(done); <-finished }
}

func usageErr(stderr io.Writer, usage string, err error, rest []string) int {
	if err == nil {
		fmt.Fprintf(stderr, "usage: %s (unexpected %q)\n", usage, strings.Join(rest, " "))
	}
	return 2
}

// roomStore is a participant's progress in a workshop room that exists.
func roomStore(ctx context.Context, dsn, name, as string) (progress.Store, func(), error) {
	db, err := services.Open(ctx, dsn, "")
	if err != nil {
		return nil, nil, err
	}
	rm, err := room.Existing(ctx, db, dsn, name, "lab challenge run")
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("%w (the room is on the workshop's MySQL: give its --mysql, as your instructor says)", err)
	}
	return rm.Store(as), func() { rm.Close(); db.Close() }, nil
}

// verdictOf is what a room keeps of a run.
func verdictOf(name string, s *chaos.Summary) progress.Verdict {
	line := fmt.Sprintf("seed %d: applied once %d of %d, lost %d, twice %d", s.Seed, s.Once, s.Committed, s.Lost, s.Twice)
	if s.Unproven != "" && len(s.Violations) == 0 {
		line += " (unproven: the evidence lay within an administrator's login's reach)"
	}
	return progress.Verdict{Challenge: name, Seed: s.Seed, Passed: s.OK(), Line: line}
}

// keepInRoom adds a run's verdict to the participant's progress in the
// room, where lab room and the room's screen show it.
func keepInRoom(store progress.Store, name string, s *chaos.Summary) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := store.Load(ctx)
	if err != nil {
		return err
	}
	p.Keep(verdictOf(name, s), time.Now())
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return store.Save(ctx, b)
}

// challengeAtWorkshop has the workshop's server grade challenge name: the
// run happens there, the program runs here as its agent, over one SSH
// connection of the participant's own ssh (their key or the workshop
// password): they hold no credential of the room, and the verdict the
// room keeps is the server's.
func challengeAtWorkshop(dest, name string, o challenge.Options, command []string, stdout, stderr io.Writer) int {
	user, hostPort, ok := strings.Cut(dest, "@")
	if !ok || user == "" || hostPort == "" {
		fmt.Fprintf(stderr, "lab challenge run --workshop %q: %s\n", dest, sayWorkshopDest.F())
		return 2
	}
	host, port := hostPort, "2222"
	if h, p, err := net.SplitHostPort(hostPort); err == nil {
		host, port = h, p
	}
	// LAB_SSH_COMMAND: the ssh to run, as GIT_SSH_COMMAND (split on
	// spaces), for a key or a config of its own.
	argv := strings.Fields(os.Getenv("LAB_SSH_COMMAND"))
	if len(argv) == 0 {
		argv = []string{"ssh"}
	}
	args := []string{"--seed", strconv.FormatUint(o.Seed, 10)}
	if o.Copies > 0 {
		args = append(args, "--copies", strconv.Itoa(o.Copies))
	}
	if o.Duration > 0 {
		args = append(args, "--duration", o.Duration.String())
	}
	ctx, stop := stopContext()
	defer stop()
	cmd := challenge.Command(command)
	if err := challenge.Warm(ctx, cmd, func(s string) { fmt.Fprintln(stdout, "  "+s) }); err != nil {
		fmt.Fprintf(stderr, "lab challenge run: %v\n", err)
		return 2
	}
	dir, _ := os.Getwd()
	a := &workshop.Agent{SSH: argv, User: user, Host: host, Port: port, Challenge: name, Args: args, Command: cmd, Dir: dir, Out: stdout, Err: stderr}
	code, err := a.Run(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "lab challenge run --workshop: %v\n", err)
	}
	return code
}

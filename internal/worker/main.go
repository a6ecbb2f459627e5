package worker

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
)

// RunChild is `lab worker KIND [--name N] [--pause-at a,b] ARGS...`: it runs
// the registered kind with its points wired to stdin/stdout. SIGTERM cancels
// the context (a graceful stop); SIGKILL is the fault.
func RunChild(args []string) int {
	TakeSecrets()
	if len(args) == 0 {
		fmt.Fprintf(os.Stderr, "usage: lab worker KIND [--name N] [--pause-at P1,P2] [flags]\nkinds: %s\n", strings.Join(Kinds(), ", "))
		return 2
	}
	kind := args[0]
	m, ok := Lookup(kind)
	if !ok {
		fmt.Fprintf(os.Stderr, "lab worker: unknown kind %q (known: %s)\n", kind, strings.Join(Kinds(), ", "))
		return 2
	}
	for _, a := range args[1:] {
		if a == "-h" || a == "--help" || a == "-help" {
			return help(kind, m)
		}
	}
	fs := flag.NewFlagSet("worker "+kind, flag.ContinueOnError)
	name := fs.String("name", kind, "name shown in the lesson")
	pause := fs.String("pause-at", "", "comma-separated points to pause at")
	// Unknown flags belong to the kind: split ours off the front.
	var rest []string
	var own []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if (a == "--name" || a == "--pause-at" || a == "-name" || a == "-pause-at") && i+1 < len(args) {
			own = append(own, a, args[i+1])
			i++
			continue
		}
		if strings.HasPrefix(a, "--name=") || strings.HasPrefix(a, "--pause-at=") {
			own = append(own, a)
			continue
		}
		rest = append(rest, a)
	}
	if err := fs.Parse(own); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	p := NewParent(os.Stdin, os.Stdout, strings.Split(*pause, ","), func() { os.Exit(3) })
	p.Name = *name
	if err := m(ctx, p, rest); err != nil {
		p.Logf("error: %v", err)
		return 1
	}
	p.Done()
	return 0
}

// help prints a kind's flags and pause points (`lab worker KIND --help`).
func help(kind string, m Main) int {
	fmt.Printf("lab worker %s [--name NAME] [--pause-at POINT,...] [flags]\n\n", kind)
	fmt.Printf("pause points, in the order a message meets them (spawn pause-at=, wait until=):\n  %s\n\n",
		strings.Join(PointsOf(kind), ", "))
	p := NewParent(strings.NewReader(""), io.Discard, nil, func() {})
	err := m(context.Background(), p, []string{"--help"})
	var h *HelpError
	if errors.As(err, &h) {
		fmt.Print(h.Usage)
		return 0
	}
	fmt.Printf("flags: see the package doc of %s\n", kind)
	return 0
}

// HelpError is what a kind's Main returns for -h or --help: its flags, for
// `lab worker KIND --help` to print.
type HelpError struct{ Usage string }

func (e *HelpError) Error() string { return e.Usage }

// FlagError turns a kind's flag-parsing error into the message to show: the
// kind's flags for -h/--help, else what was wrong and the flags.
func FlagError(name string, fs *flag.FlagSet, err error) error {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" {
			def = " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(&b, "  --%-18s %s%s\n", f.Name, f.Usage, def)
	})
	if errors.Is(err, flag.ErrHelp) {
		return &HelpError{Usage: "flags:\n" + b.String()}
	}
	return fmt.Errorf("%s: %v\nflags:\n%s", name, err, b.String())
}

package worker

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// RunChild is `lab worker KIND [--name N] [--pause-at a,b] ARGS...`: it runs
// the registered kind with its points wired to stdin/stdout. SIGTERM cancels
// the context (a graceful stop); SIGKILL is the fault.
func RunChild(args []string) int {
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
	p := NewPoints(os.Stdin, os.Stdout, strings.Split(*pause, ","), func() { os.Exit(3) })
	p.Name = *name
	if err := m(ctx, p, rest); err != nil {
		p.Logf("error: %v", err)
		return 1
	}
	p.Done()
	return 0
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/containers"
	"github.com/rmlab/lab/internal/dbnode"
	"github.com/rmlab/lab/internal/node"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/labs"
)

// cmdClean removes what the lab created in one namespace, for an instructor
// after a workshop (`lab clean --namespace alice`, or every learner's with
// --all-namespaces) or a learner starting over: the two article databases,
// the queues and exchanges the lessons reset, and the namespace's Redis keys.
// Like a lesson's reset, it deletes only what carries the lab's mark and
// leaves anything else, saying so.
func runClean(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, g := command("clean", "usage: lab clean [--namespace NS | --all-namespaces] [flags]\n\ndrops what the lab created in a namespace (only what carries its mark)\n", stderr)
	all := fs.Bool("all-namespaces", false, "every namespace that has a lab database")
	if code, ok := parse(fs, g, args, stderr); !ok {
		return code
	}
	if !noArgs(fs, stderr, "; name the namespace with --namespace NS") {
		return 2
	}
	return cmdClean(ctx, *g, *all, stdout, stderr)
}

func cmdClean(ctx context.Context, g globals, allNamespaces bool, stdout, stderr io.Writer) int {
	g.cfg.NoDocker, g.cfg.Containers = true, 0 // a container the lab starts is empty: nothing to clean there
	svc, code := connect(ctx, g, stderr, false)
	if svc == nil {
		return code
	}
	defer svc.Close()
	c, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cl := cleaner.New(c, svc, labs.BrokerNames(g.lessons), stdout)
	defer cl.Close()
	// A server at its default address that refuses connections is not
	// running here (a laptop with Docker only): nothing of the lab's can
	// be on it now. One the user named must answer.
	for _, s := range []struct {
		field, what string
		err         error
	}{{"mysql", "databases", svc.Info.MySQLErr}, {"amqp", "queues and exchanges", svc.Info.AMQPErr}, {"redis", "Redis keys", svc.Info.RedisErr}} {
		if s.err != nil && svc.Config.From(s.field) == "default" && errors.Is(s.err, syscall.ECONNREFUSED) {
			cl.Absent(s.what, "no server runs at its default address, so nothing of the lab's is there now (start it and run lab clean again if the lab used it)")
		}
	}
	spaces := []services.Names{svc.Names}
	if !allNamespaces && svc.Info.MySQLErr == nil {
		// The lanes of this learner's parallel replays are theirs too.
		found, err := cleaner.Namespaces(c, svc)
		if err != nil {
			cl.Report("", err)
		}
		for _, n := range found {
			if services.IsLaneNamespace(n.NS) && strings.HasPrefix(n.NS, svc.Names.NS+"_r") {
				spaces = append(spaces, n)
			}
		}
	}
	if allNamespaces {
		if svc.Info.MySQLErr != nil {
			fmt.Fprintf(stderr, "lab clean --all-namespaces: the namespaces are found from their databases: %v\n", svc.Info.MySQLErr)
			return 1
		}
		var err error
		if spaces, err = cleaner.Namespaces(c, svc); err != nil {
			fmt.Fprintf(stderr, "lab clean --all-namespaces: %v\n", err)
			return 1
		}
		if len(spaces) == 0 {
			fmt.Fprintln(stdout, "no namespace has a lab database: nothing to clean")
		}
	}
	for _, n := range spaces {
		cl.Namespace(c, n)
	}
	// Broker nodes of the lab's own whose lab died before it could stop
	// them (their folders; the kernel already ended their processes).
	if dir, err := node.Dir(); err == nil {
		removed, err := node.Sweep(dir)
		for _, r := range removed {
			fmt.Fprintf(stdout, "removed the broker nodes a lab left in %s\n", r)
		}
		if err != nil {
			cl.Report("", err)
		}
	}
	// MySQL servers of the lab's own (for the lessons that read a binary
	// log) whose lab died before it could stop them.
	if dir, err := dbnode.Dir(); err == nil {
		removed, err := node.Sweep(dir)
		for _, r := range removed {
			fmt.Fprintf(stdout, "removed the MySQL server a lab left in %s\n", r)
		}
		if err != nil {
			cl.Report("", err)
		}
	}
	// Containers a lab killed with SIGKILL left (its own it removes on
	// exit and on signals).
	if e, ok := containers.FromEnv(); ok && e.Answers(c) {
		if _, err := e.Sweep(c, stdout); err != nil {
			cl.Report("", err)
		}
	}
	if cl.Failed() {
		fmt.Fprintln(stderr, "lab clean: some things were left; each line above says why")
		return 1
	}
	return 0
}

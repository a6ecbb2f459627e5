package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/broker"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/steps"
)

// cmdClean removes what the lab created in one namespace, for an instructor
// after a workshop (`lab clean --namespace alice`) or a learner starting
// over: the two article databases, the queues and exchanges the lessons
// reset, and the namespace's Redis keys. Like a lesson's reset, it deletes
// only what carries the lab's mark and leaves anything else, saying so.
func cmdClean(ctx context.Context, g globals, stdout, stderr io.Writer) int {
	g.cfg.NoDocker = true // a container the lab starts is empty: nothing to clean there
	svc, code := connect(ctx, g, stderr, false)
	if svc == nil {
		return code
	}
	defer svc.Close()
	ns := "the default namespace"
	if svc.Names.NS != "" {
		ns = "namespace " + svc.Names.NS
	}
	fmt.Fprintf(stdout, "cleaning %s\n", ns)
	failed := false
	report := func(what string, err error) {
		if err != nil {
			failed = true
			fmt.Fprintf(stdout, "  left   %v\n", err)
			return
		}
		if what != "" {
			fmt.Fprintf(stdout, "  done   %s\n", what)
		}
	}
	c, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	if svc.Info.MySQLErr != nil {
		report("", fmt.Errorf("databases: %v", svc.Info.MySQLErr))
	} else {
		for _, db := range []string{services.IdempotencyDB, services.OutboxDB} {
			name := svc.Names.Name(db)
			gone, err := databaseExists(c, svc, name)
			if err == nil && gone {
				err = services.DropOwned(c, svc.MySQL, name)
				report("DROP DATABASE "+name, err)
			} else {
				report("", err)
			}
		}
	}

	if svc.Info.AMQPErr != nil {
		report("", fmt.Errorf("queues and exchanges: %v", svc.Info.AMQPErr))
	} else {
		queues, exchanges, err := brokerNames(g)
		if err != nil {
			report("", err)
		}
		bc := broker.NewClient(svc.Config.AMQP)
		defer bc.Close()
		// Queues first: deleting an exchange leaves its queues' bindings to go
		// with it, deleting a queue first keeps nothing half-bound.
		for _, set := range []struct {
			kind  string
			names []string
		}{{"queue", queues}, {"exchange", exchanges}} {
			for _, n := range set.names {
				note, err := bc.Remove(c, set.kind, svc.Names.Name(n))
				report(note, err)
			}
		}
	}

	if svc.Info.RedisErr != nil {
		report("", fmt.Errorf("Redis keys: %v", svc.Info.RedisErr))
	} else {
		pat := svc.Names.RedisKey("lab:*")
		n, err := svc.DeleteRedisKeys(c, pat)
		if err == nil {
			report(fmt.Sprintf("deleted %d Redis key(s) matching %s", n, pat), nil)
		} else {
			report("", fmt.Errorf("Redis keys %s: %v", pat, err))
		}
	}
	if failed {
		fmt.Fprintln(stderr, "lab clean: some things were left; each line above says why")
		return 1
	}
	return 0
}

func databaseExists(ctx context.Context, svc *services.Services, name string) (bool, error) {
	var n int
	err := svc.MySQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look up database %s: %w", name, err)
	}
	return n > 0, nil
}

// brokerNames are the queues and exchanges (article names) the lessons'
// reset steps clear: every built-in lesson in both languages, and an
// instructor's own with --lessons.
func brokerNames(g globals) (queues, exchanges []string, err error) {
	qs, xs := map[string]bool{}, map[string]bool{}
	var all []*lab.Lesson
	for _, lang := range labs.Langs {
		ls, _ := labs.Builtin(lang) // the built-in lessons always load (a test says so)
		all = append(all, ls...)
		if g.lessons != "" {
			mine, lerr := labs.LoadDir(g.lessons, lang)
			if lerr != nil {
				err = lerr
			}
			all = append(all, mine...)
		}
	}
	for _, l := range all {
		for _, s := range l.Steps() {
			if s.Kind != "reset" {
				continue
			}
			for _, q := range steps.SplitList(s.Attrs["queues"]) {
				qs[q] = true
			}
			for _, x := range steps.SplitList(s.Attrs["exchanges"]) {
				xs[x] = true
			}
		}
	}
	return sorted(qs), sorted(xs), err
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

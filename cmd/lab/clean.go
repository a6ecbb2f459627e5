package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/broker"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/steps"
)

// cmdClean removes what the lab created in one namespace, for an instructor
// after a workshop (`lab clean --namespace alice`, or every learner's with
// --all-namespaces) or a learner starting over: the two article databases,
// the queues and exchanges the lessons reset, and the namespace's Redis keys.
// Like a lesson's reset, it deletes only what carries the lab's mark and
// leaves anything else, saying so.
func cmdClean(ctx context.Context, g globals, allNamespaces bool, stdout, stderr io.Writer) int {
	g.cfg.NoDocker = true // a container the lab starts is empty: nothing to clean there
	svc, code := connect(ctx, g, stderr, false)
	if svc == nil {
		return code
	}
	defer svc.Close()
	c, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	queues, exchanges, lerr := brokerNames(g)
	cl := cleaner{svc: svc, queues: queues, exchanges: exchanges, out: stdout}
	if lerr != nil {
		cl.report("", lerr)
	}
	spaces := []services.Names{svc.Names}
	if !allNamespaces && svc.Info.MySQLErr == nil {
		// The lanes of this learner's parallel replays are theirs too.
		found, err := labNamespaces(c, svc)
		if err != nil {
			cl.report("", err)
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
		if spaces, err = labNamespaces(c, svc); err != nil {
			fmt.Fprintf(stderr, "lab clean --all-namespaces: %v\n", err)
			return 1
		}
		if len(spaces) == 0 {
			fmt.Fprintln(stdout, "no namespace has a lab database: nothing to clean")
		}
	}
	bc := broker.NewClient(svc.Config.AMQP)
	defer bc.Close()
	cl.broker = bc
	if svc.Info.Management {
		if m, err := broker.ManagementFor(svc.Config.AMQP, svc.Config.Management); err == nil {
			cl.marks, _ = m.Exchanges(c) // without the list, the lessons' names still go
		}
	}
	for _, n := range spaces {
		cl.namespace(c, n)
	}
	if cl.failed {
		fmt.Fprintln(stderr, "lab clean: some things were left; each line above says why")
		return 1
	}
	return 0
}

// cleaner removes one namespace at a time and remembers whether anything
// was left.
type cleaner struct {
	svc               *services.Services
	broker            *broker.Client
	queues, exchanges []string
	marks             []string // every exchange name at the broker, when the management API lists them
	out               io.Writer
	failed            bool
}

// markedIn are the real names of the queues and exchanges the broker's
// marks say the lab created in a named namespace (their names end _NS).
// The default namespace's names carry no suffix to tell them from any
// other's, so it gets only what the lessons name.
func (cl *cleaner) markedIn(names services.Names) (queues, exchanges []string) {
	if names.NS == "" {
		return nil, nil
	}
	q, x := broker.MarkedNames(cl.marks)
	keep := func(in []string) []string {
		var out []string
		for _, n := range in {
			// orders_alice is alice's; orders_alice_r1 ends _r1 but is
			// alice's replay lane's, not learner r1's: the article's
			// names hold no '_'.
			if article, ok := strings.CutSuffix(n, "_"+names.NS); ok && article != "" && !strings.Contains(article, "_") {
				out = append(out, n)
			}
		}
		return out
	}
	return keep(q), keep(x)
}

func (cl *cleaner) report(what string, err error) {
	if err != nil {
		cl.failed = true
		fmt.Fprintf(cl.out, "  left   %v\n", err)
		return
	}
	if what != "" {
		fmt.Fprintf(cl.out, "  done   %s\n", what)
	}
}

func (cl *cleaner) namespace(ctx context.Context, names services.Names) {
	svc := cl.svc
	ns := "the default namespace"
	if names.NS != "" {
		ns = "namespace " + names.NS
	}
	fmt.Fprintf(cl.out, "cleaning %s\n", ns)

	if svc.Info.MySQLErr != nil {
		cl.report("", fmt.Errorf("databases: %v", svc.Info.MySQLErr))
	} else {
		for _, db := range []string{services.IdempotencyDB, services.OutboxDB} {
			name := names.Name(db)
			what := ""
			dropped, err := services.DropOwned(ctx, svc.MySQL, name)
			if dropped {
				what = "DROP DATABASE " + name
			}
			cl.report(what, err)
		}
	}

	if svc.Info.AMQPErr != nil {
		cl.report("", fmt.Errorf("queues and exchanges: %v", svc.Info.AMQPErr))
	} else {
		// Queues first, then the exchanges they were bound to: what the
		// lessons name, and what the broker's marks say the lab created
		// in this namespace (any lesson's, loaded or not).
		mq, mx := cl.markedIn(names)
		for _, set := range []struct {
			kind         string
			names, extra []string
		}{{"queue", cl.queues, mq}, {"exchange", cl.exchanges, mx}} {
			done := map[string]bool{}
			for _, n := range set.names {
				done[names.Name(n)] = true
				cl.report(cl.broker.Remove(ctx, set.kind, names.Name(n)))
			}
			for _, real := range set.extra {
				if !done[real] {
					cl.report(cl.broker.Remove(ctx, set.kind, real))
				}
			}
		}
	}

	if svc.Info.RedisErr != nil {
		cl.report("", fmt.Errorf("Redis keys: %v", svc.Info.RedisErr))
	} else {
		pat := names.RedisKey("lab:*")
		n, err := svc.DeleteRedisKeys(ctx, pat)
		if err == nil {
			cl.report(fmt.Sprintf("deleted %d Redis key(s) matching %s", n, pat), nil)
		} else {
			cl.report("", fmt.Errorf("Redis keys %s: %v", pat, err))
		}
	}
}

// labNamespaces finds every named namespace that has one of the article's
// databases carrying the lab's mark, replay lanes' included (the default
// namespace is not one of them: clean it with a plain `lab clean`).
func labNamespaces(ctx context.Context, svc *services.Services) ([]services.Names, error) {
	rows, err := svc.MySQL.QueryContext(ctx, "SELECT TABLE_SCHEMA FROM information_schema.TABLES WHERE TABLE_NAME = ?", services.MarkTable)
	if err != nil {
		return nil, fmt.Errorf("list the lab's databases: %w", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	var out []services.Names
	for rows.Next() {
		var schema string
		if err := rows.Scan(&schema); err != nil {
			return nil, err
		}
		for _, db := range []string{services.IdempotencyDB, services.OutboxDB} {
			ns, ok := strings.CutPrefix(schema, db+"_")
			if ok && !seen[ns] && (services.ValidNamespace(ns) || services.IsLaneNamespace(ns)) {
				seen[ns] = true
				out = append(out, services.Names{NS: ns})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NS < out[j].NS })
	return out, rows.Err()
}

// brokerNames are the queues and exchanges (article names) the lessons'
// reset steps clear and declare steps create: every built-in lesson in both
// languages, and an instructor's own with --lessons. (With the management
// API, the broker's own marks add whatever else the lab created.)
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
			if s.Kind == "declare" {
				q, x := steps.Declared(s)
				for _, n := range q {
					qs[n] = true
				}
				for _, n := range x {
					xs[n] = true
				}
			}
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

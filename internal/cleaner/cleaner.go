// Package cleaner removes what the lab created in a namespace, and only
// that: the article's databases that carry the lab's mark, the queues and
// exchanges the lessons declare or reset (and, with the management API,
// whatever the broker's marks say the lab created there), and the
// namespace's Redis keys. `lab clean` and a workshop room's reset of one
// participant both use it.
package cleaner

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/services"
)

// Cleaner removes one namespace at a time and remembers whether anything
// was left.
type Cleaner struct {
	svc               *services.Services
	broker            *broker.Client
	queues, exchanges []string
	marks             []string     // every exchange name at the broker, when the management API lists them
	users             broker.Users // how to remove a workshop participant's vhost and RabbitMQ user, nil where the lab cannot
	usersWhy          string       // why users is nil
	out               io.Writer
	failed            bool
	// absent are the stores (databases, queues and exchanges, Redis keys)
	// whose server is not running here at all, with why nothing of the
	// lab's can be there: said, not a failure.
	absent map[string]string
}

// Absent says that what (databases, queues and exchanges, Redis keys) has
// no server running here, why: cleaning it is no failure.
func (cl *Cleaner) Absent(what, why string) {
	if cl.absent == nil {
		cl.absent = map[string]string{}
	}
	cl.absent[what] = why
}

// unreachable reports a store whose server did not answer: a failure,
// unless it is absent.
func (cl *Cleaner) unreachable(what string, err error) {
	if why := cl.absent[what]; why != "" {
		fmt.Fprintf(cl.out, "  none   %s: %s\n", what, why)
		return
	}
	cl.Report("", fmt.Errorf("%s: %v", what, err))
}

// Names are the queues and exchanges (article names, not yet namespaced)
// the lessons may have created in any namespace, as the lessons' loader
// found them (labs.BrokerNames): the cleaner reads no lesson itself.
type Names struct {
	Queues, Exchanges []string
	// Gone are lessons folders given to the lab before that no longer
	// exist: the queues only they named are found by the broker's marks
	// alone, and the cleaner says so.
	Gone []string
	// Err is why the folder given now did not load; the cleaner reports it.
	Err error
}

// New is a cleaner on svc that removes the queues and exchanges names
// lists (and, with the management API, those the broker's marks name), and
// reports each thing it did or left on out.
func New(ctx context.Context, svc *services.Services, names Names, out io.Writer) *Cleaner {
	cl := &Cleaner{svc: svc, queues: names.Queues, exchanges: names.Exchanges, out: out, broker: broker.NewClient(svc.Config.AMQP)}
	if names.Err != nil {
		cl.Report("", names.Err)
	}
	if len(names.Gone) > 0 && !svc.Info.Management {
		fmt.Fprintf(out, "  note   the lessons folder(s) %s, given to the lab before, no longer exist: queues and exchanges only those lessons named are found by the broker's marks, which need the management API (rabbitmq-plugins enable rabbitmq_management)\n",
			strings.Join(names.Gone, ", "))
	}
	if svc.Info.Management {
		if m, err := broker.ManagementFor(svc.Config.AMQP, svc.Config.Management); err == nil {
			cl.marks, _ = m.Exchanges(ctx) // without the list, the lessons' names still go
		}
	}
	if svc.Info.AMQPErr == nil {
		cl.users, cl.usersWhy = broker.UsersFor(ctx, svc.Config.AMQP, svc.Config)
	}
	return cl
}

// Close drops the broker connection.
func (cl *Cleaner) Close() { cl.broker.Close() }

// Failed reports whether anything was left.
func (cl *Cleaner) Failed() bool { return cl.failed }

// markedIn are the real names of the queues and exchanges the broker's
// marks say the lab created in a named namespace (their names end _NS).
// The default namespace's names carry no suffix to tell them from any
// other's, so it gets only what the lessons name.
func (cl *Cleaner) markedIn(names services.Names) (queues, exchanges []string) {
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

// BrokerNames are the real names of the queues and exchanges Namespace
// looks for in names's namespace: the lessons' (namespaced) and those the
// broker's marks say the lab created there. A caller can check they are
// gone without the management API (the test harness does).
func (cl *Cleaner) BrokerNames(names services.Names) (queues, exchanges []string) {
	mq, mx := cl.markedIn(names)
	for _, q := range cl.queues {
		queues = append(queues, names.Name(q))
	}
	for _, x := range cl.exchanges {
		exchanges = append(exchanges, names.Name(x))
	}
	return append(queues, mq...), append(exchanges, mx...)
}

func (cl *Cleaner) Report(what string, err error) {
	if err != nil {
		cl.failed = true
		fmt.Fprintf(cl.out, "  left   %v\n", err)
		return
	}
	if what != "" {
		fmt.Fprintf(cl.out, "  done   %s\n", what)
	}
}

func (cl *Cleaner) Namespace(ctx context.Context, names services.Names) {
	svc := cl.svc
	ns := "the default namespace"
	if names.NS != "" {
		ns = "namespace " + names.NS
	}
	fmt.Fprintf(cl.out, "cleaning %s\n", ns)

	if svc.Info.MySQLErr != nil {
		cl.unreachable("databases", svc.Info.MySQLErr)
	} else {
		for _, db := range []string{services.IdempotencyDB, services.OutboxDB} {
			name := names.Name(db)
			what := ""
			dropped, err := services.DropOwned(ctx, svc.MySQL, name)
			if dropped {
				what = "DROP DATABASE " + name
			}
			cl.Report(what, err)
		}
		// The logins a challenge's run gives its program, left by a run
		// that was killed.
		users, err := services.DropLabUsers(ctx, svc.MySQL, names.NS)
		for _, u := range users {
			cl.Report("DROP USER "+u, nil)
		}
		cl.Report("", err)
	}

	if svc.Info.AMQPErr != nil {
		cl.unreachable("queues and exchanges", svc.Info.AMQPErr)
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
				cl.Report(cl.broker.Remove(ctx, set.kind, names.Name(n)))
			}
			for _, real := range set.extra {
				if !done[real] {
					cl.Report(cl.broker.Remove(ctx, set.kind, real))
				}
			}
		}
		// A workshop participant's vhost (their queues and exchanges in
		// it) and RabbitMQ user, made together (lab serve).
		if vhost := services.ParticipantVhost(names.NS); names.NS != "" {
			had, err := broker.VhostExists(ctx, svc.Config.AMQP, vhost)
			switch {
			case err != nil:
				cl.Report("", err)
			case had && cl.users == nil:
				cl.Report("", fmt.Errorf("the RabbitMQ vhost %s is left: %s", vhost, cl.usersWhy))
			case had:
				_, err := cl.users.DeleteVhost(ctx, vhost)
				cl.Report("deleted the RabbitMQ vhost "+vhost+" with everything in it", err)
				user := services.ParticipantUser(names.NS)
				if err := cl.users.Delete(ctx, user); err != nil {
					cl.Report("", fmt.Errorf("the RabbitMQ user %s: %w", user, err))
				}
			}
		}
	}

	if svc.Info.RedisErr != nil {
		cl.unreachable("Redis keys", svc.Info.RedisErr)
	} else {
		pat := names.RedisKey("lab:*")
		n, err := svc.DeleteRedisKeys(ctx, pat)
		if err == nil {
			cl.Report(fmt.Sprintf("deleted %d Redis key(s) matching %s", n, pat), nil)
		} else {
			cl.Report("", fmt.Errorf("Redis keys %s: %v", pat, err))
		}
		// A workshop participant's Redis user (lab serve).
		if names.NS != "" {
			user := services.RedisUser(names.NS)
			if had, err := svc.Redis.Do(ctx, "ACL", "DELUSER", user).Int(); err == nil && had > 0 {
				cl.Report("deleted the Redis user "+user, nil)
			}
		}
	}
}

// Namespaces finds every named namespace that has one of the article's
// databases carrying the lab's mark, replay lanes' included, or a workshop
// participant's MySQL or Redis user (the default namespace is not one of
// them: clean it with a plain `lab clean`).
func Namespaces(ctx context.Context, svc *services.Services) ([]services.Names, error) {
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// A workshop participant who never ran a reset has logins and no
	// database: found by their MySQL and Redis users.
	add := func(user string) {
		ns, ok := strings.CutPrefix(user, "rmlab_")
		if ns, ok2 := strings.CutSuffix(ns, "_p"); ok && ok2 && !seen[ns] && services.ValidNamespace(ns) {
			seen[ns] = true
			out = append(out, services.Names{NS: ns})
		}
	}
	if users, err := svc.MySQL.QueryContext(ctx, `SELECT User FROM mysql.user WHERE User LIKE 'rmlab\_%\_p'`); err == nil {
		for users.Next() {
			var u string
			if users.Scan(&u) == nil {
				add(u)
			}
		}
		users.Close()
	}
	if svc.Redis != nil {
		if list, err := svc.Redis.Do(ctx, "ACL", "USERS").StringSlice(); err == nil {
			for _, u := range list {
				add(u)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].NS < out[j].NS })
	return out, nil
}

package labtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"sort"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/services"
)

// What the harness removes, for a namespace ns (a test's, or a process's
// PREFIX+TAG+SLOT with digit set):
//
//  1. the lab's own cleaning, `lab clean --namespace N` (cleaner.Namespace),
//     for every namespace N of the family: the article's marked databases,
//     the queues and exchanges the lessons declare and those the broker's
//     marks name, the lab_N:* Redis keys;
//  2. then whatever is left whose name carries a namespace of the family,
//     marked or not (a test's namespace is its own: a "foreign" database a
//     test made to see it refused is the test's too): databases, Redis
//     keys, and queues and exchanges the broker lists (management API) or,
//     without a list, those the test named (Env.Queue, Env.Exchange) and
//     those step 1 looked for.
//
// leftovers then lists what still exists: the test fails on any.

// scope is a family of namespaces and what is known of its broker names.
type scope struct {
	svc    *services.Services
	ns     string
	digit  bool     // ns is a process prefix: a digit follows it
	spaces []string // namespaces known to be used (a test's own, its lanes, Derived ones)
	// queues and exchanges named by the test or looked for by the cleaner:
	// what is checked when the broker cannot list its objects.
	queues, exchanges []string
	cleaners          []*cleaner.Cleaner // with lesson folders besides the built-in lessons (Env.Lessons)
	rabbitmqctl       bool               // list the broker with rabbitmqctl when the management API is off (slow: ~1 s)
}

func (s *scope) mysqlUp() bool { return s.svc.MySQL != nil && s.svc.Info.MySQLErr == nil }
func (s *scope) redisUp() bool { return s.svc.Redis != nil && s.svc.Info.RedisErr == nil }
func (s *scope) amqpUp() bool  { return s.svc.Info.AMQPErr == nil }

// clean runs the lab's cleaners and then the sweep; out receives the
// report of the built-in lessons' cleaner (those made by Env.Lessons write
// where they were told). It returns what is left.
func (s *scope) clean(ctx context.Context, out io.Writer) ([]string, error) {
	var errs []error
	spaces, err := s.namespaces(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	cleaners := s.cleaners
	if len(cleaners) == 0 {
		cleaners = []*cleaner.Cleaner{cleaner.New(ctx, s.svc, cleaner.Builtin(), out)}
	}
	for _, cl := range cleaners {
		for _, ns := range spaces {
			names := services.Names{NS: ns}
			cl.Namespace(ctx, names)
			q, x := cl.BrokerNames(names)
			s.queues = append(s.queues, q...)
			s.exchanges = append(s.exchanges, x...)
		}
		cl.Close()
	}
	if err := s.sweep(ctx); err != nil {
		errs = append(errs, err)
	}
	left, err := s.leftovers(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	return left, errors.Join(errs...)
}

// namespaces are the family's namespaces that may hold something: the
// known ones and those the databases and Redis keys carry.
func (s *scope) namespaces(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(ns string) {
		if ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	for _, ns := range s.spaces {
		add(ns)
	}
	dbs, keys, err := s.listStores(ctx)
	for _, n := range append(dbs, keys...) {
		add(namespaceIn(n, s.ns, s.digit))
	}
	sort.Strings(out)
	return out, err
}

// listStores lists the family's databases and Redis keys.
func (s *scope) listStores(ctx context.Context) (dbs, keys []string, err error) {
	var errs []error
	if s.mysqlUp() {
		rows, err := s.svc.MySQL.QueryContext(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE ?", "%"+likeEscape(s.ns)+"%")
		if err != nil {
			errs = append(errs, fmt.Errorf("list databases: %w", err))
		} else {
			for rows.Next() {
				var n string
				if rows.Scan(&n) == nil && inFamily(n, s.ns, s.digit) {
					dbs = append(dbs, n)
				}
			}
			rows.Close()
		}
	}
	if s.redisUp() {
		iter := s.svc.Redis.Scan(ctx, 0, "*"+s.ns+"*", 500).Iterator()
		for iter.Next(ctx) {
			if inFamily(iter.Val(), s.ns, s.digit) {
				keys = append(keys, iter.Val())
			}
		}
		if err := iter.Err(); err != nil {
			errs = append(errs, fmt.Errorf("scan Redis keys: %w", err))
		}
	}
	return dbs, keys, errors.Join(errs...)
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `_`, `\_`, `%`, `\%`).Replace(s)
}

// brokerObjects are the family's queues and exchanges at the broker (the
// lab's marks among the exchanges), listed when the broker can list them
// (listed true), else those of the known names that exist.
func (s *scope) brokerObjects(ctx context.Context) (queues, exchanges []string, listed bool, err error) {
	if !s.amqpUp() {
		return nil, nil, false, nil
	}
	allQ, allX, how := s.listBroker(ctx)
	if how != "" {
		for _, q := range allQ {
			if inFamily(q, s.ns, s.digit) {
				queues = append(queues, q)
			}
		}
		for _, x := range allX {
			if inFamily(x, s.ns, s.digit) {
				exchanges = append(exchanges, x)
			}
		}
		return queues, exchanges, true, nil
	}
	c := broker.NewClient(s.svc.Config.AMQP)
	defer c.Close()
	var errs []error
	check := func(kind string, names []string) []string {
		var found []string
		for _, n := range uniq(names) {
			ok, err := exists(ctx, c, kind, n)
			if err != nil {
				errs = append(errs, err)
			} else if ok {
				found = append(found, n)
			}
		}
		return found
	}
	var marks []string
	for _, q := range s.queues {
		marks = append(marks, broker.MarkOf("queue", q))
	}
	for _, x := range s.exchanges {
		marks = append(marks, broker.MarkOf("exchange", x))
	}
	queues = check("queue", s.queues)
	exchanges = check("exchange", append(slices.Clone(s.exchanges), marks...))
	return queues, exchanges, false, errors.Join(errs...)
}

// listBroker lists every queue and exchange of the vhost: through the
// management API when it answers, else (when allowed) with rabbitmqctl on
// the local node the AMQP URL names. how is "" when neither can.
func (s *scope) listBroker(ctx context.Context) (queues, exchanges []string, how string) {
	if s.svc.Info.Management {
		if m, err := broker.ManagementFor(s.svc.Config.AMQP, s.svc.Config.Management); err == nil {
			q, qerr := mgmtNames(ctx, m, "queues")
			x, xerr := m.Exchanges(ctx)
			if qerr == nil && xerr == nil {
				return q, x, "the management API"
			}
		}
	}
	if !s.rabbitmqctl || !localNode(s.svc.Config) {
		return nil, nil, ""
	}
	vhost := "/"
	if u, err := url.Parse(s.svc.Config.AMQP); err == nil && strings.TrimPrefix(u.Path, "/") != "" {
		vhost = strings.TrimPrefix(u.Path, "/")
	}
	list := func(what string) ([]string, error) {
		out, err := exec.CommandContext(ctx, s.svc.Config.Rabbitmqctl, "-q", what, "-p", vhost, "--no-table-headers", "name").Output()
		if err != nil {
			return nil, err
		}
		return strings.Fields(string(out)), nil
	}
	q, qerr := list("list_queues")
	x, xerr := list("list_exchanges")
	if qerr != nil || xerr != nil {
		return nil, nil, ""
	}
	return q, x, "rabbitmqctl"
}

// localNode: rabbitmqctl reaches the node the AMQP URL names only when that
// is this machine's default node, or LAB_RABBITMQCTL names a wrapper for
// another (.ci/servers writes one).
func localNode(cfg services.Config) bool {
	addr, err := services.AMQPAddr(cfg.AMQP)
	if err != nil || !isLoopback(addr) {
		return false
	}
	return strings.HasSuffix(addr, ":5672") || cfg.From("rabbitmqctl") == "LAB_RABBITMQCTL"
}

// mgmtNames lists the names of one kind of object (queues) of m's vhost.
func mgmtNames(ctx context.Context, m *broker.Management, kind string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.Base+"/api/"+kind+"/"+url.PathEscape(m.VHost)+"?columns=name", nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(m.User, m.Pass)
	resp, err := m.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("management API: HTTP %d listing %s", resp.StatusCode, kind)
	}
	var xs []struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&xs); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, x.Name)
	}
	return out, nil
}

// exists looks a queue or exchange up with a passive declare. A queue
// another connection holds exclusively exists too.
func exists(ctx context.Context, c *broker.Client, kind, name string) (bool, error) {
	err := c.Probe(ctx, func(ch *amqp.Channel) error {
		if kind == "queue" {
			_, err := ch.QueueDeclarePassive(name, false, false, false, false, nil)
			return err
		}
		return ch.ExchangeDeclarePassive(name, "direct", false, false, false, false, nil)
	})
	var ae *amqp.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ae) && ae.Code == amqp.NotFound:
		return false, nil
	case errors.As(err, &ae) && ae.Code == amqp.ResourceLocked:
		return true, nil
	}
	return false, fmt.Errorf("look up %s %s: %w", kind, name, err)
}

// sweep removes whatever of the family the lab's cleaner left.
func (s *scope) sweep(ctx context.Context) error {
	var errs []error
	dbs, keys, err := s.listStores(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	for _, db := range dbs {
		if _, err := services.DropOwned(ctx, s.svc.MySQL, db); err != nil {
			// Unmarked, and in the test's own namespace: the test made it.
			if _, err := s.svc.MySQL.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+db+"`"); err != nil {
				errs = append(errs, fmt.Errorf("drop database %s: %w", db, err))
			}
		}
	}
	if len(keys) > 0 {
		if err := s.svc.Redis.Del(ctx, keys...).Err(); err != nil {
			errs = append(errs, fmt.Errorf("delete Redis keys %v: %w", keys, err))
		}
	}
	queues, exchanges, _, err := s.brokerObjects(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	if len(queues)+len(exchanges) > 0 {
		c := broker.NewClient(s.svc.Config.AMQP)
		defer c.Close()
		for _, q := range queues {
			if err := c.Probe(ctx, func(ch *amqp.Channel) error { _, err := ch.QueueDelete(q, false, false, false); return err }); err != nil && !broker.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete queue %s: %w", q, err))
			}
		}
		for _, x := range exchanges {
			if err := c.Probe(ctx, func(ch *amqp.Channel) error { return ch.ExchangeDelete(x, false, false) }); err != nil && !broker.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete exchange %s: %w", x, err))
			}
		}
	}
	return errors.Join(errs...)
}

// leftovers lists what of the family still exists, one "kind name" each.
func (s *scope) leftovers(ctx context.Context) ([]string, error) {
	dbs, keys, err1 := s.listStores(ctx)
	queues, exchanges, _, err2 := s.brokerObjects(ctx)
	var out []string
	for _, set := range []struct {
		kind  string
		names []string
	}{{"database", dbs}, {"Redis key", keys}, {"queue", queues}, {"exchange", exchanges}} {
		for _, n := range set.names {
			out = append(out, set.kind+" "+n)
		}
	}
	return out, errors.Join(err1, err2)
}

func uniq(xs []string) []string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return slices.Compact(s)
}

package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
)

// A program of its own runs with the least privilege the servers' own
// access control can express, so that it cannot write what the checker
// reads: a MySQL user per copy, made for the run and dropped after,
// granted only its role's tables; a RabbitMQ user of the run's own allowed
// only its queue (consumer) or the default exchange (relay), where the lab
// can make one; and its proxy refuses what no broker permission can (a
// consumer may purge the queue it reads).

// grant is one table a role may use, and how.
type grant struct {
	table, privileges string
}

// grantsOf are the tables of role's database a program in that role may
// use. Nothing else: not the audit (lab_*), not the other database.
func grantsOf(o Options) []grant {
	if o.Own.Role == "relay" {
		// Column grants: the event's identity, payload and commit time are
		// the producer's, and the checker reads them.
		return []grant{{"outbox_event", "SELECT, UPDATE (status, attempts, available_at, lease_token, locked_until)"}}
	}
	g := []grant{
		// No INSERT or DELETE: every account exists, and a row the
		// audit's UPDATE trigger never saw would be an effect from nowhere.
		{"points_account", "SELECT, UPDATE (points)"},
		{"consumed_operation", "SELECT, INSERT, UPDATE, DELETE"},
		// All of UPDATE: INSERT … ON DUPLICATE KEY UPDATE needs it on
		// every column it inserts (MariaDB). A row moved to another key
		// by an UPDATE is no conflict recorded: the checker counts a key
		// only where the audit saw it inserted (checkConflicts).
		{"consumed_conflict", "SELECT, INSERT, UPDATE, DELETE"},
	}
	if o.Order {
		g = append(g, grant{"order_view", "SELECT, UPDATE (status, version)"})
	}
	return g
}

// dbUser is the MySQL login of one copy.
type dbUser struct {
	name, password string
}

// userFor is copy's user name: rmlab_NS_c1 for consumer-1 (at most 25
// characters, under MySQL's 32).
func userFor(ns, copy string) string {
	role, n, _ := strings.Cut(copy, "-")
	return services.LabUserPrefix(ns) + role[:1] + n
}

// makeDBUsers creates a user per copy of the program with only its role's
// grants. A server that refuses (the lab's login may not create users)
// stops the run: grading a program that holds the lab's own login would
// trust tables it can write as it likes.
func (r *Run) makeDBUsers(ctx context.Context, copies []string) error {
	if _, err := services.DropLabUsers(ctx, r.server, r.O.Namespace); err != nil {
		return err
	}
	host, err := services.ClientHost(ctx, r.server)
	if err != nil {
		return err
	}
	db := r.names.Name(services.IdempotencyDB)
	if r.O.Own.Role == "relay" {
		db = r.names.Name(services.OutboxDB)
	}
	r.dbUsers = map[string]dbUser{}
	for _, c := range copies {
		u := dbUser{name: userFor(r.O.Namespace, c)}
		account := fmt.Sprintf("'%s'@'%s'", u.name, host)
		// A quoted identifier of the lab's making: nothing to escape; the
		// password never in a statement (services.SetPassword).
		stmts := []string{"CREATE USER " + account + " WITH MAX_USER_CONNECTIONS 30"}
		for _, g := range grantsOf(r.O) {
			stmts = append(stmts, fmt.Sprintf("GRANT %s ON `%s`.`%s` TO %s", g.privileges, db, g.table, account))
		}
		refused := func(verb string, err error) error {
			return &lab.Error{What: fmt.Sprintf("the lab cannot give your program a MySQL user of its own (%s: %v)", verb, err),
				Where: r.cfg.From("mysql"),
				Fix: "the grader never runs a program with the lab's own login, which could write what it checks; " +
					"give the lab's login CREATE USER and GRANT OPTION (GRANT CREATE USER ON *.* TO it WITH GRANT OPTION), or run on a server where it has them"}
		}
		for _, st := range stmts {
			if _, err := r.server.ExecContext(ctx, st); err != nil {
				verb, _, _ := strings.Cut(st, " '")
				return refused(strings.SplitN(verb, " ON", 2)[0], err)
			}
		}
		if err := services.KeptToItsDatabases(ctx, r.server, account); err != nil {
			return refused("SHOW GRANTS", err)
		}
		if u.password, err = services.SetPassword(ctx, r.server, account); err != nil {
			return refused("ALTER USER", err)
		}
		secret.NotePassword(u.password)
		r.dbUsers[c] = u
		r.Users = append(r.Users, fmt.Sprintf("MySQL user %s (%s), from %s: %s on %s only", u.name, c, host, strings.Join(tablesOf(r.O), ", "), db))
	}
	return nil
}

func tablesOf(o Options) []string {
	var t []string
	for _, g := range grantsOf(o) {
		t = append(t, g.table)
	}
	return t
}

// dsnFor is the DSN of copy, on db, with its own login.
func (r *Run) dsnFor(copy, db string) (*gomysql.Config, error) {
	dc, err := gomysql.ParseDSN(r.cfg.MySQL)
	if err != nil {
		return nil, fmt.Errorf("the MySQL DSN: %w", err)
	}
	dc.DBName = db
	if u, ok := r.dbUsers[copy]; ok {
		dc.User, dc.Passwd = u.name, u.password
	}
	return dc, nil
}

// permissionsOf are the broker permissions of role on queue: a consumer
// reads its queue, a relay writes to the default exchange; neither
// configures (declares, deletes) anything.
func permissionsOf(role, queue string) broker.Permissions {
	if role == "relay" {
		return broker.Permissions{Configure: "^$", Write: `^amq\.default$`, Read: "^$"}
	}
	return broker.Permissions{Configure: "^$", Write: "^$", Read: "^" + regexp.QuoteMeta(queue) + "$"}
}

// brokerUsers is how the lab can make a RabbitMQ user here: the management
// API when it answers, else rabbitmqctl on a local node the lab may
// control (--broker-control); nil, with why, when neither.
func (r *Run) brokerUsers(ctx context.Context) (broker.Users, string) {
	cfg := r.cfg
	if r.nodes != nil {
		cfg.BrokerControl = "" // rabbitmqctl would reach the system node, not the run's own
	}
	return broker.UsersFor(ctx, r.broker, cfg)
}

// makeBrokerUser makes the run's RabbitMQ user and returns the URL the
// program's proxy forwards its login to (the proxy passes the login
// through; the broker checks it).
func (r *Run) makeBrokerUser(ctx context.Context) error {
	users, why := r.brokerUsers(ctx)
	queue := r.names.Name(QueueName)
	if users == nil {
		r.Notes = append(r.Notes, "RabbitMQ: your program logs in as the lab does ("+why+"); its proxy refuses queue.purge, queue.delete and exchange.delete")
		return nil
	}
	name, pass := services.LabUserPrefix(r.O.Namespace)+r.O.Own.Role, services.Password()
	vhost := "/"
	if u, err := url.Parse(r.broker); err == nil && strings.TrimPrefix(u.Path, "/") != "" {
		vhost, _ = url.PathUnescape(strings.TrimPrefix(u.Path, "/"))
	}
	// rabbitmqctl starts a VM each run: seconds each on a loaded machine.
	c, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	users.Delete(c, name) // one a killed run left
	p := permissionsOf(r.O.Own.Role, queue)
	if err := users.Add(c, name, pass, "", vhost, p); err != nil {
		return &lab.Error{What: "the lab cannot give your program a RabbitMQ user of its own: " + err.Error(), Where: users.Via(),
			Fix: "give the lab's RabbitMQ login the administrator tag, or leave out --management / --broker-control to run with the proxy's refusals only"}
	}
	r.brokerUser, r.brokerUsersVia = name, users
	u, _ := url.Parse(r.broker)
	u.User = url.UserPassword(name, pass)
	r.ownBroker = u.String()
	r.Users = append(r.Users, fmt.Sprintf("RabbitMQ user %s (through %s): configure %q, write %q, read %q on vhost %s", name, users.Via(), p.Configure, p.Write, p.Read, vhost))
	return nil
}

// forbid is what every copy's proxy refuses whatever its login.
var forbid = []amqpproxy.Match{
	{Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassQueue, Method: amqpproxy.MethodQueuePurge},
	{Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassQueue, Method: amqpproxy.MethodQueueDelete},
	{Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassExchange, Method: amqpproxy.MethodExchangeDelete},
}

// dropUsers removes the run's users; what it could not remove is said.
func (r *Run) dropUsers() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var errs []error
	if len(r.dbUsers) > 0 && r.server != nil {
		if _, err := services.DropLabUsers(ctx, r.server, r.O.Namespace); err != nil {
			errs = append(errs, err)
		}
	}
	if r.brokerUsersVia != nil {
		if err := r.brokerUsersVia.Delete(ctx, r.brokerUser); err != nil {
			errs = append(errs, fmt.Errorf("remove the RabbitMQ user %s: %w", r.brokerUser, err))
		}
	}
	if len(errs) == 0 {
		r.dbUsers, r.brokerUsersVia = nil, nil // once
	}
	return errors.Join(errs...)
}

// refusal matches what MySQL and RabbitMQ say when they refuse a login
// something: the program's own lines carry it.
var refusal = regexp.MustCompile(`(?i)(command denied to user|access denied for user|ACCESS_REFUSED|access to (queue|exchange) .* refused)`)

// deniedWhat reads "UPDATE command denied to user 'u'@'h' for table
// `db`.`t`" (MariaDB) or "… for table 't'" (MySQL) into "UPDATE on t";
// deniedColumn "… for column 'c' in table 't'" into "UPDATE of column c
// on t".
var deniedColumn = regexp.MustCompile("(?i)([A-Z ]+?) command denied to user '[^']*'@'[^']*' for column [`']?([^`'\\s]+)[`']? in table [`']?([^`'\\s]+)[`']?")

var deniedWhat = regexp.MustCompile("(?i)([A-Z ]+?) command denied to user '[^']*'@'[^']*' for table [`']?(?:([^`'\\s.]+)[`']?\\.[`']?)?([^`'\\s]+)[`']?")

// refusedLine turns one line a copy wrote into what it was refused, with
// what its role may do, or "" when the line is no refusal.
func refusedLine(role string, o Options, line string) string {
	if !refusal.MatchString(line) {
		return ""
	}
	what := line
	if m := deniedColumn.FindStringSubmatch(line); m != nil {
		what = strings.TrimSpace(m[1]) + " of column " + m[2] + " on " + m[3]
	} else if m := deniedWhat.FindStringSubmatch(line); m != nil {
		what = strings.TrimSpace(m[1]) + " on " + m[3]
		if m[2] != "" {
			what = strings.TrimSpace(m[1]) + " on " + m[2] + "." + m[3]
		}
	}
	may := "the consumer may use " + strings.Join(tablesOf(o), ", ") + " and read its queue"
	if role == "relay" {
		may = "the relay may use outbox_event and publish to the default exchange"
	}
	return "your program was refused " + what + ": " + may
}

// refusals are the distinct refusals the copies' lines carry (at most 5).
func refusals(lines []string, role string, o Options) []string {
	var out []string
	for _, l := range lines {
		if s := refusedLine(role, o, l); s != "" && !slices.Contains(out, s) && len(out) < 5 {
			out = append(out, s)
		}
	}
	return out
}

package services

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/password"
)

// LabUserPrefix is what every MySQL user the lab makes in namespace ns
// starts with (a challenge's program runs as rmlab_NS_c1, a workshop
// participant's lessons as rmlab_NS_p), so that a run and lab clean can
// drop the users a killed run left. What follows the prefix never holds a
// '_', which is how rmlab_ab_c1 (namespace ab) is told from rmlab_ab_x_c1
// (namespace ab_x).
func LabUserPrefix(ns string) string { return "rmlab_" + ns + "_" }

// ParticipantUser is the MySQL user, RabbitMQ user and vhost name of a
// workshop participant in namespace ns.
func ParticipantUser(ns string) string { return LabUserPrefix(ns) + "p" }

// ParticipantVhost is the RabbitMQ vhost a workshop participant's lessons
// run in.
func ParticipantVhost(ns string) string { return "rmlab_" + ns }

// Password is a fresh random password for a login the lab makes: hex
// digits only, nothing to escape in a statement or a URL.
func Password() string { return password.New() }

// DropLabUsers drops every MySQL user of namespace ns the lab made, and
// returns their names.
func DropLabUsers(ctx context.Context, server *sql.DB, ns string) ([]string, error) {
	like := likeEscape(LabUserPrefix(ns)) + "%"
	rows, err := server.QueryContext(ctx, "SELECT User, Host FROM mysql.user WHERE User LIKE ? AND User NOT LIKE ?", like, like+`\_%`)
	if c := Code(err); c == ErTableAccessDenied || c == ErColumnAccessDenied || c == ErDBAccessDenied {
		return nil, nil // a login that cannot read mysql.user never made users either
	}
	if err != nil {
		return nil, fmt.Errorf("list the MySQL users the lab made (mysql.user): %w", err)
	}
	var users [][2]string
	for rows.Next() {
		var u, h string
		if rows.Scan(&u, &h) == nil {
			users = append(users, [2]string{u, h})
		}
	}
	rows.Close()
	var names []string
	for _, u := range users {
		// Names the lab made: letters, digits and _ only, nothing to escape.
		if _, err := server.ExecContext(ctx, fmt.Sprintf("DROP USER IF EXISTS '%s'@'%s'", u[0], u[1])); err != nil {
			return names, fmt.Errorf("drop the MySQL user %s: %w", u[0], err)
		}
		names = append(names, u[0])
	}
	return names, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "_", `\_`, "%", `\%`).Replace(s)
}

// hostName is a host as MySQL writes it in an account: nothing to escape.
var hostName = regexp.MustCompile(`^[A-Za-z0-9._:%-]{1,255}$`)

// ClientHost is the host the server sees the lab connect from: a login the
// lab makes for a program or a participant it runs on this machine is
// good from there only, not from anywhere ('%').
func ClientHost(ctx context.Context, server *sql.DB) (string, error) {
	var h string
	if err := server.QueryRowContext(ctx, "SELECT SUBSTRING_INDEX(USER(), '@', -1)").Scan(&h); err != nil {
		return "", fmt.Errorf("read the host MySQL sees the lab connect from: %w", err)
	}
	if !hostName.MatchString(h) {
		return "", fmt.Errorf("MySQL sees the lab connect from %q, which the lab cannot write in an account", h)
	}
	return h, nil
}

// ParticipantGrants are what a workshop participant's MySQL user may do:
// everything in their own two databases (a grant on a database that does
// not exist yet lets them create it), and nothing server wide. PROCESS
// would show every session's statement (and InnoDB's transactions, which
// the lab reads for them with its own login, filtered to their sessions:
// Watch); reading the binary log would show every participant's rows (a
// binlog relay reads it with a login of the lab's, kept to its database).
func ParticipantGrants(ns string) []string {
	n := Names{NS: ns}
	var g []string
	for _, db := range []string{IdempotencyDB, OutboxDB} {
		// In a database grant '_' matches any character: escaped, it is
		// the one database.
		g = append(g, "ALL PRIVILEGES ON `"+strings.ReplaceAll(n.Name(db), "_", `\_`)+"`.*")
	}
	return g
}

// MakeParticipantUser makes (or gives a new password to) namespace ns's
// participant user, good from the host the lab connects from, with
// ParticipantGrants and at most maxConns connections, and returns the DSN
// cfg's server is reached with as that user.
func MakeParticipantUser(ctx context.Context, server *sql.DB, dsn, ns string, maxConns int) (string, error) {
	host, err := ClientHost(ctx, server)
	if err != nil {
		return "", err
	}
	user := ParticipantUser(ns)
	account := fmt.Sprintf("'%s'@'%s'", user, host)
	// A name of the lab's making and a host checked above: nothing to
	// escape; the password never in a statement (SetPassword).
	stmts := []string{
		"CREATE USER IF NOT EXISTS " + account,
		// A user an earlier lab made held PROCESS: start from nothing.
		"REVOKE ALL PRIVILEGES, GRANT OPTION FROM " + account,
		fmt.Sprintf("ALTER USER %s WITH MAX_USER_CONNECTIONS %d", account, maxConns),
	}
	for _, g := range ParticipantGrants(ns) {
		stmts = append(stmts, "GRANT "+g+" TO "+account)
	}
	for _, st := range stmts {
		if _, err := server.ExecContext(ctx, st); err != nil {
			verb := strings.SplitN(st, " '", 2)[0]
			return "", fmt.Errorf("make %s's MySQL user %s (%s): %w", ns, user, verb, err)
		}
	}
	if err := KeptToItsDatabases(ctx, server, account); err != nil {
		return "", fmt.Errorf("make %s's MySQL user %s: %w", ns, user, err)
	}
	pass, err := SetPassword(ctx, server, account)
	if err != nil {
		return "", fmt.Errorf("make %s's MySQL user %s: %w", ns, user, err)
	}
	dc, err := gomysql.ParseDSN(dsn)
	if err != nil {
		return "", fmt.Errorf("the MySQL DSN: %w", err)
	}
	dc.User, dc.Passwd = user, pass
	return dc.FormatDSN(), nil
}

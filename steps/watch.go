package steps

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/rmlab/lab/internal/services"
)

// A workshop participant's login has no PROCESS (it would show every
// session's statement, passwords included), and without it InnoDB's
// transaction tables refuse it and the process list shows only its own
// sessions. A lesson that reads them (1, 22, 30) reads them through the
// lab's own login (services.Watch) with each table replaced by the rows of
// the participant's own sessions, and CONNECTION_ID() by the step
// session's: what the participant's login would see with PROCESS, kept to
// its own sessions. Only a SELECT goes this way; anything else runs as the
// participant, where the server refuses it.

// watchTableRe matches a table only PROCESS reads in full, with the alias
// that may follow it.
var watchTableRe = regexp.MustCompile(`(?i)\binformation_schema\s*\.\s*(innodb_trx|innodb_locks|innodb_lock_waits|processlist)\b(\s+(?:as\s+)?([a-z_][a-z0-9_]*))?`)

var connectionIDRe = regexp.MustCompile(`(?i)\bconnection_id\s*\(\s*\)`)

// notAlias are the words that may follow a table and are not its alias.
var notAlias = map[string]bool{}

func init() {
	for _, w := range strings.Fields("where join on using group order limit left right inner cross outer natural straight_join union having window for lock into procedure") {
		notAlias[w] = true
	}
}

// watched reports whether stmt must be read through w.
func watched(w *services.Watch, stmt string) bool {
	if w == nil || !watchTableRe.MatchString(stmt) {
		return false
	}
	f := strings.Fields(strings.TrimLeft(stmt, "( \t\n"))
	return len(f) > 0 && (strings.EqualFold(f[0], "SELECT") || strings.EqualFold(f[0], "WITH"))
}

// watchSQL is stmt with each PROCESS-only table kept to user's sessions and
// CONNECTION_ID() replaced by self.
func watchSQL(stmt, user string, self int64) string {
	q := "'" + strings.ReplaceAll(user, "'", "''") + "'"
	own := "SELECT t.trx_id FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.USER = " + q
	out := watchTableRe.ReplaceAllStringFunc(stmt, func(m string) string {
		sub := watchTableRe.FindStringSubmatch(m)
		table, rest, alias := strings.ToUpper(sub[1]), sub[2], sub[3]
		if alias == "" || notAlias[strings.ToLower(alias)] {
			// No alias: the table's own name, so table.column still reads.
			rest = " " + table + rest
		}
		var derived string
		switch table {
		case "INNODB_TRX":
			derived = "SELECT t.* FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.USER = " + q
		case "INNODB_LOCKS":
			derived = "SELECT l.* FROM information_schema.INNODB_LOCKS l WHERE l.lock_trx_id IN (" + own + ")"
		case "INNODB_LOCK_WAITS":
			derived = "SELECT w.* FROM information_schema.INNODB_LOCK_WAITS w WHERE w.requesting_trx_id IN (" + own + ")"
		case "PROCESSLIST":
			derived = "SELECT * FROM information_schema.PROCESSLIST WHERE USER = " + q
		}
		return "(" + derived + ")" + rest
	})
	return connectionIDRe.ReplaceAllString(out, strconv.FormatInt(self, 10))
}

// executeWatched runs stmt for session s through w, read only, in s's
// database; the outcome names the statement as the lesson wrote it.
func executeWatched(ctx context.Context, w *services.Watch, s *Session, stmt string) *Outcome {
	c, err := w.DB.Conn(ctx)
	if err != nil {
		o := &Outcome{Kind: "sql", Stmt: stmt}
		setErr(o, err)
		return o
	}
	defer c.Close()
	if s.DB != "" {
		if _, err := c.ExecContext(ctx, "USE `"+s.DB+"`"); err != nil {
			o := &Outcome{Kind: "sql", Stmt: stmt}
			setErr(o, err)
			return o
		}
	}
	if _, err := c.ExecContext(ctx, "START TRANSACTION READ ONLY"); err == nil {
		defer c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	}
	o := execute(ctx, c, watchSQL(stmt, w.User, s.id))
	o.Stmt = stmt
	return o
}

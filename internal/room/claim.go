package room

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/services"
)

// Beat is how often a server renews its participants' screens; a screen
// not renewed for Stale belongs to a server that died.
const (
	Beat  = 3 * time.Second
	Stale = 4 * Beat
)

// Resetting is the holder of a screen while lab room --reset cleans the
// participant's namespace: a reconnect then is told to retry.
const Resetting = "reset"

// Claim takes participant's one screen in the room for holder (a
// server's session, "SERVER#TOKEN", or Resetting). It returns who holds it instead when another holder's
// beat is fresh: a participant may have one screen in the whole room, or
// a reset on one server would drop the databases under a live session on
// another.
func (r *Room) Claim(ctx context.Context, name, holder string) (heldBy string, err error) {
	// One statement, no read-then-write: two claims of different names
	// must not deadlock on the gap between them. MySQL assigns left to
	// right, so beat sees the server just decided.
	for try := 0; try < 3; try++ {
		for attempt := 0; ; attempt++ {
			_, err = r.DB.ExecContext(ctx, `INSERT INTO screen (name, server, beat) VALUES (?, ?, UTC_TIMESTAMP(6))
				ON DUPLICATE KEY UPDATE
				server = IF(server = VALUES(server) OR beat < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND, VALUES(server), server),
				beat = IF(server = VALUES(server), VALUES(beat), beat)`, name, holder, Stale.Microseconds())
			if err == nil || attempt == 2 || !services.Retryable(err) {
				break
			}
		}
		if err != nil {
			return "", fmt.Errorf("room %s: claim %s's screen: %w", r.Name, name, err)
		}
		var server string
		err = r.DB.QueryRowContext(ctx, "SELECT server FROM screen WHERE name=?", name).Scan(&server)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue // its holder released it between the two: claim again
		case err != nil:
			return "", fmt.Errorf("room %s: claim %s's screen: %w", r.Name, name, err)
		case server != holder:
			return server, nil
		}
		return "", nil
	}
	return "", fmt.Errorf("room %s: claim %s's screen: it kept changing hands", r.Name, name)
}

// Renew is holder's beat for name's screen; false when another holder took
// it over (this one's beats had stopped long enough to look dead).
func (r *Room) Renew(ctx context.Context, name, holder string) (bool, error) {
	res, err := r.DB.ExecContext(ctx, "UPDATE screen SET beat=UTC_TIMESTAMP(6) WHERE name=? AND server=?", name, holder)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Release gives name's screen up, if holder still holds it.
func (r *Room) Release(ctx context.Context, name, holder string) error {
	_, err := r.DB.ExecContext(ctx, "DELETE FROM screen WHERE name=? AND server=?", name, holder)
	return err
}

// Holder is who holds name's screen now ("" for nobody, or a stale one).
func (r *Room) Holder(ctx context.Context, name string) (string, error) {
	var server string
	err := r.DB.QueryRowContext(ctx, "SELECT server FROM screen WHERE name=? AND beat > UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND",
		name, Stale.Microseconds()).Scan(&server)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return server, err
}

// maxAudit bounds each kind of the room's log: past it, that kind's
// oldest lines are dropped and one line says how many.
var maxAudit = 20000

// Audit records one line of the room's log, as its kind.
func (r *Room) Audit(ctx context.Context, line string) error {
	line = Plain(line, 512)
	kind := kindOf(line)
	res, err := r.DB.ExecContext(ctx, "INSERT INTO audit (at, server, line, kind) VALUES (UTC_TIMESTAMP(6), ?, ?, ?)", r.Server, line, kind)
	if err != nil {
		return err
	}
	// Now and then, not on every line: a flood must not cost a DELETE a
	// line. Each kind keeps its own newest lines.
	every := int64(max(1, min(1000, maxAudit/10)))
	if id, err := res.LastInsertId(); err == nil && id%every == 0 {
		var last int64
		err := r.DB.QueryRowContext(ctx, "SELECT id FROM audit WHERE kind=? ORDER BY id DESC LIMIT 1 OFFSET ?", kind, maxAudit).Scan(&last)
		if err != nil {
			return nil // fewer than maxAudit of the kind, or no answer: kept
		}
		if res, err := r.DB.ExecContext(ctx, "DELETE FROM audit WHERE kind=? AND id <= ?", kind, last); err == nil {
			if n, _ := res.RowsAffected(); n > 0 {
				r.DB.ExecContext(ctx, "INSERT INTO audit (at, server, line, kind) VALUES (UTC_TIMESTAMP(6), ?, ?, ?)", r.Server,
					fmt.Sprintf("the log keeps the newest %d lines of each kind: %d older %s lines were dropped", maxAudit, n, kind), kind)
			}
		}
	}
	return nil
}

// LogKind picks lines of the room's log: "" for all.
type LogKind string

// The kinds a log line can be read as, from the words the servers write:
// each begins with one of its prefixes, or holds one of its words.
var logKinds = map[LogKind]struct{ prefixes, words []string }{
	"logins":   {prefixes: []string{"session of ", "instructor's session "}, words: []string{" logged in with "}},
	"refusals": {prefixes: []string{"refused ", "closed a connection "}},
	"commands": {prefixes: []string{"lab room: "}},
}

// kindOf is the kind line is kept as ("other" for none of them).
func kindOf(line string) LogKind {
	for k, m := range logKinds {
		for _, p := range m.prefixes {
			if strings.HasPrefix(line, p) && (k != "logins" || strings.Contains(line, " ended")) {
				return k
			}
		}
		for _, w := range m.words {
			if strings.Contains(line, w) {
				return k
			}
		}
	}
	return "other"
}

// Valid reports whether k is a kind the log knows.
func (k LogKind) Valid() bool { _, ok := logKinds[k]; return ok || k == "" }

// Entry is one line of the room's log.
type Entry struct {
	At     time.Time
	Server string
	Line   string
}

// Log is the room's newest n log lines of kind, oldest first: with a kind,
// a flood of another kind hides nothing.
func (r *Room) Log(ctx context.Context, n int, kind LogKind) ([]Entry, error) {
	where, args := "", []any{}
	if kind != "" {
		where, args = " WHERE kind=?", []any{string(kind)}
	}
	rows, err := r.DB.QueryContext(ctx, "SELECT at, server, line FROM (SELECT id, at, server, line FROM audit"+where+" ORDER BY id DESC LIMIT ?) t ORDER BY id", append(args, n)...)
	if err != nil {
		return nil, fmt.Errorf("room %s: read its log: %w", r.Name, err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		if err := rows.Scan(&e.At, &e.Server, &e.Line); err != nil {
			return nil, err
		}
		e.Server, e.Line = plain.Line(e.Server, 128), plain.Line(e.Line, 512)
		out = append(out, e)
	}
	return out, rows.Err()
}

// Plain is s as one line of plain text of at most max bytes (plain.Line).
// What the instructor says reaches every participant's terminal, so it
// must not be able to drive one.
func Plain(s string, max int) string { return plain.Line(s, max) }

package steps

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"
	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/services"
)

// Session is one named MySQL connection of a lesson. Two sessions interleave
// like two mysql clients; a statement blocked on a lock keeps running in the
// background while later steps run on other sessions.
type Session struct {
	Name string
	DB   string // namespaced database, "" for none
	conn *sql.Conn
	id   int64 // server thread id, to KILL a blocked statement
	pool *sql.DB
	// watch reads InnoDB's transactions for a login without PROCESS.
	watch *services.Watch
	// LockWait is how long InnoDB lets a statement of this session wait
	// for a lock before it ends it with 1205 (innodb_lock_wait_timeout).
	LockWait time.Duration

	mu      sync.Mutex // guards pending: the screen polls Waiting while a step runs
	pending *running
}

type running struct {
	stmt  string
	start time.Time
	done  chan struct{}
	out   *Outcome
}

// Session returns the named session, opening it on db when new.
func (r *Run) Session(ctx context.Context, name, db string) (*Session, error) {
	r.mu.Lock()
	s, ok := r.sessions[name]
	r.mu.Unlock()
	if ok {
		if db != "" && db != s.DB && !s.Waiting() {
			if _, err := s.conn.ExecContext(ctx, "USE `"+db+"`"); err != nil {
				return nil, err
			}
			s.DB = db
		}
		return s, nil
	}
	if r.Env.Svc == nil || r.Env.Svc.MySQL == nil {
		return nil, errors.New("no MySQL connection (run `lab doctor`)")
	}
	c, err := r.Env.Svc.MySQL.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("open session %s: %w", name, err)
	}
	if db != "" {
		if _, err := c.ExecContext(ctx, "USE `"+db+"`"); err != nil {
			c.Close()
			return nil, fmt.Errorf("session %s: USE %s: %w (did the lesson's reset step run?)", name, db, err)
		}
	}
	s = &Session{Name: name, DB: db, conn: c, pool: r.Env.Svc.MySQL, watch: r.Env.Svc.Watch}
	_ = c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&s.id)
	if !r.Env.Replay {
		// A learner reads while B waits: InnoDB's 50 s would end the wait
		// (1205) before a slow reader picks how A's transaction ends. The
		// screen shows the limit beside the wait.
		_, _ = c.ExecContext(ctx, fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", int(ScreenLockWait.Seconds())))
	}
	var secs float64
	if c.QueryRowContext(ctx, "SELECT @@SESSION.innodb_lock_wait_timeout").Scan(&secs) == nil {
		s.LockWait = time.Duration(secs * float64(time.Second))
	}
	r.mu.Lock()
	r.sessions[name] = s
	r.mu.Unlock()
	return s, nil
}

// ScreenLockWait is innodb_lock_wait_timeout for a lesson's sessions on the
// screen (replay keeps the server's).
const ScreenLockWait = 10 * time.Minute

// LockWait is how long session name's statements may wait for a lock (0
// when there is no such session).
func (r *Run) LockWait(name string) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.sessions[name]; ok {
		return s.LockWait
	}
	return 0
}

// Sessions lists the open sessions' names and whether each is blocked.
func (r *Run) Sessions() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for n, s := range r.sessions {
		out[n] = s.Waiting()
	}
	return out
}

// Waiting reports whether a statement is still blocked.
func (s *Session) Waiting() bool {
	p := s.current()
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (s *Session) current() *running {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// blockedStmt returns the statement still running and since when, if any.
func (s *Session) blockedStmt() (stmt string, since time.Time, ok bool) {
	if !s.Waiting() {
		return "", time.Time{}, false
	}
	p := s.current()
	return p.stmt, p.start, true
}

// Start sends stmt in the background; Await collects it.
func (s *Session) Start(stmt string) {
	p := &running{stmt: stmt, start: time.Now(), done: make(chan struct{})}
	s.mu.Lock()
	s.pending = p
	s.mu.Unlock()
	go func() {
		// The statement's own context is not the step's: a lock wait must
		// outlive the step that started it. Close() ends it by closing the
		// connection.
		if watched(s.watch, stmt) {
			// A read of information_schema waits on no lock.
			c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			p.out = executeWatched(c, s.watch, s, stmt)
			cancel()
		} else {
			p.out = execute(context.Background(), s.conn, stmt)
		}
		p.out.Source = "sql " + s.Name
		p.out.Elapsed = time.Since(p.start)
		close(p.done)
	}()
}

// Await waits up to d for the pending statement. It returns the outcome, or
// a pending outcome (Pending=true, Elapsed so far) when it is still blocked.
func (s *Session) Await(d time.Duration) *Outcome {
	p := s.current()
	if p == nil {
		return nil
	}
	finished := func() *Outcome {
		s.mu.Lock()
		if s.pending == p {
			s.pending = nil
		}
		s.mu.Unlock()
		return p.out
	}
	// An ended statement is ended whatever d is: a select between it and
	// an expired timer picks either at random (Await(0), behind `expect
	// waiting`, said "still waiting" about half the time for a statement
	// that had already failed with 1205).
	select {
	case <-p.done:
		return finished()
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return finished()
	case <-t.C:
		return &Outcome{Source: "sql " + s.Name, Kind: "sql", Stmt: p.stmt, Pending: true, Elapsed: time.Since(p.start)}
	}
}

// Close rolls back whatever is open and releases the connection; a blocked
// statement ends with it.
func (s *Session) Close() {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if !s.Waiting() {
		_, _ = s.conn.ExecContext(c, "ROLLBACK")
	} else if s.id != 0 {
		// Closing a *sql.Conn waits for its running query, so end the
		// blocked statement's server thread instead; InnoDB rolls it back.
		_, _ = s.pool.ExecContext(c, fmt.Sprintf("KILL %d", s.id))
	}
	done := make(chan struct{})
	go func() { s.conn.Close(); close(done) }()
	select {
	case <-done:
	case <-c.Done():
	}
}

func isQuery(stmt string) bool {
	f := strings.ToUpper(firstWord(stmt))
	switch f {
	case "SELECT", "SHOW", "WITH", "DESCRIBE", "DESC", "EXPLAIN", "VALUES", "TABLE":
		return true
	}
	return false
}

func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\n("); i >= 0 {
		return s[:i]
	}
	return s
}

func execute(ctx context.Context, c *sql.Conn, stmt string) *Outcome {
	o := &Outcome{Kind: "sql", Stmt: stmt}
	if isQuery(stmt) {
		rows, err := c.QueryContext(ctx, stmt)
		if err != nil {
			setErr(o, err)
			return o
		}
		defer rows.Close()
		o.Columns, _ = rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(o.Columns))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				setErr(o, err)
				return o
			}
			row := make([]string, len(vals))
			for i, v := range vals {
				if v.Valid {
					row[i] = v.String
				} else {
					row[i] = "NULL"
				}
			}
			o.Rows = append(o.Rows, row)
		}
		if err := rows.Err(); err != nil {
			setErr(o, err)
		}
		return o
	}
	res, err := c.ExecContext(ctx, stmt)
	if err != nil {
		setErr(o, err)
		return o
	}
	o.Affected, _ = res.RowsAffected()
	return o
}

func setErr(o *Outcome, err error) {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		o.ErrCode = fmt.Sprint(me.Number)
		state := string(me.SQLState[:])
		o.ErrText = fmt.Sprintf("ERROR %d (%s): %s", me.Number, state, me.Message)
		return
	}
	o.ErrCode = "error"
	o.ErrText = err.Error()
}

// Text renders an outcome the way the mysql client would.
func (o *Outcome) Text() string {
	switch {
	case o.Pending:
		return sayStillWaiting.F(o.Elapsed.Round(10 * time.Millisecond))
	case o.Shown != "":
		return o.Shown
	case o.ErrText != "":
		return o.ErrText
	case o.Columns != nil:
		return Table(o.Columns, o.Rows)
	default:
		return fmt.Sprintf("Query OK, %d row%s affected (%.2f sec)", o.Affected, plural(o.Affected), o.Elapsed.Seconds())
	}
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Table draws rows as the mysql client does, in ASCII so any terminal
// width rules hold.
func Table(cols []string, rows [][]string) string {
	w := make([]int, len(cols))
	for i, c := range cols {
		w[i] = displayWidth(c)
	}
	for _, r := range rows {
		for i, v := range r {
			if i < len(w) && displayWidth(v) > w[i] {
				w[i] = displayWidth(v)
			}
		}
	}
	var b strings.Builder
	sep := "+"
	for _, n := range w {
		sep += strings.Repeat("-", n+2) + "+"
	}
	line := func(vals []string) {
		b.WriteString("|")
		for i, v := range vals {
			b.WriteString(" " + v + strings.Repeat(" ", w[i]-displayWidth(v)) + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString(sep + "\n")
	line(cols)
	b.WriteString(sep + "\n")
	for _, r := range rows {
		line(r)
	}
	b.WriteString(sep + "\n")
	if len(rows) == 1 {
		b.WriteString("1 row in set")
	} else if len(rows) == 0 {
		b.WriteString("Empty set")
	} else {
		fmt.Fprintf(&b, "%d rows in set", len(rows))
	}
	return b.String()
}

func displayWidth(s string) int { return ansi.StringWidth(s) }

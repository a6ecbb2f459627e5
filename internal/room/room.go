// Package room is a workshop's shared state in MySQL (`lab serve --room
// NAME`): where every participant is, how their run went, their ledger
// verdicts, and their whole progress. Several `lab serve` processes pointed
// at the same server form one room; the instructor's room view reads it. It
// is also a progress store (progress.Store), so a participant who
// reconnects to any server of the room resumes where they were.
package room

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/services"
	labsql "github.com/rmlab/lab/sql"
)

var nameRe = regexp.MustCompile(`^[a-z0-9_]{1,24}$`)

// Room is one workshop's database.
type Room struct {
	Name   string
	DB     *sql.DB // a pool on the room's database
	Server string  // this process, as the room shows it (host:port)

	saves saveRate // each participant's saves, at most SavesPerSecond
}

// DBName is the room's database: lab_room_NAME, carrying the lab's mark.
func DBName(name string) string { return "lab_room_" + name }

// Open creates the room's database when it is missing (marked as the
// lab's) and opens a pool on it. A database of that name the lab did not
// create is refused and left alone.
func Open(ctx context.Context, server *sql.DB, dsn, name, self string) (*Room, error) {
	return open(ctx, server, dsn, name, self, true)
}

// Existing opens a room some `lab serve --room` created; a name with no
// room is an error, not a new empty room (a typo must not look like an
// empty class).
func Existing(ctx context.Context, server *sql.DB, dsn, name, self string) (*Room, error) {
	return open(ctx, server, dsn, name, self, false)
}

func open(ctx context.Context, server *sql.DB, dsn, name, self string, create bool) (*Room, error) {
	if !nameRe.MatchString(name) {
		return nil, fmt.Errorf("room %q: use 1–24 lowercase letters, digits or _", name)
	}
	db := DBName(name)
	var exists, marked int
	if err := server.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", db).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look up the room's database %s: %w", db, err)
	}
	if exists == 1 {
		if err := server.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA=? AND TABLE_NAME=?",
			db, services.MarkTable).Scan(&marked); err != nil {
			return nil, err
		}
		if marked == 0 {
			return nil, fmt.Errorf("database %s exists but was not created by the lab; nothing was touched — pick another --room", db)
		}
	} else if !create {
		return nil, fmt.Errorf("there is no room %s on this MySQL server (database %s): lab serve --room %s creates it", name, db, name)
	} else {
		if _, err := server.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+db+"`"); err != nil {
			return nil, fmt.Errorf("create the room's database %s: %w", db, err)
		}
		if err := services.Mark(ctx, server, db); err != nil {
			return nil, err
		}
	}
	pool, err := services.Open(ctx, dsn, db)
	if err != nil {
		return nil, err
	}
	schema, _ := labsql.File("room/schema.sql")
	for _, stmt := range labsql.Split(schema) {
		if _, err := pool.ExecContext(ctx, stmt); err != nil {
			pool.Close()
			return nil, fmt.Errorf("room %s: %w", name, err)
		}
	}
	if err := kindsApart(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("room %s: %w", name, err)
	}
	return &Room{Name: name, DB: pool, Server: self}, nil
}

// kindsApart gives a room made before its log kept kinds apart the kind
// column, each old line as the kind its words say.
func kindsApart(ctx context.Context, db *sql.DB) error {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA=DATABASE() AND TABLE_NAME='audit' AND COLUMN_NAME='kind'").Scan(&n); err != nil || n == 1 {
		return err
	}
	if _, err := db.ExecContext(ctx, "ALTER TABLE audit ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'other', ADD KEY kind_id (kind, id)"); err != nil && services.Code(err) != 1060 {
		return fmt.Errorf("give its log kinds: %w", err) // 1060: another server did it meanwhile
	}
	for _, u := range []string{
		"UPDATE audit SET kind='logins' WHERE line LIKE '% logged in with %' OR line LIKE 'session of % ended%' OR line LIKE 'instructor''s session % ended%'",
		"UPDATE audit SET kind='refusals' WHERE line LIKE 'refused %' OR line LIKE 'closed a connection %'",
		"UPDATE audit SET kind='commands' WHERE line LIKE 'lab room: %'",
	} {
		if _, err := db.ExecContext(ctx, u); err != nil {
			return fmt.Errorf("give its log kinds: %w", err)
		}
	}
	return nil
}

// Close releases the pool.
func (r *Room) Close() { r.DB.Close() }

// Participant is one row of the room, as the instructor reads it.
type Participant struct {
	Name     string        `json:"name"`
	Server   string        `json:"server"`
	Lesson   string        `json:"lesson"`
	Step     int           `json:"step"`
	Steps    int           `json:"steps"`
	OnStep   time.Duration `json:"on_step_ns"` // time on the current step
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Verdicts string        `json:"verdicts"`
	Updated  time.Time     `json:"updated"`
	// Presence: a screen open on some server of the room now; Done, the
	// open lesson finished; Stuck, online on an unfinished lesson with no
	// step for StuckAfter.
	Online bool `json:"online"`
	Done   bool `json:"done"`
	Stuck  bool `json:"stuck"`
	// The last failed step and the first line of why, "" once a later
	// step passed.
	FailStep string `json:"fail_step,omitempty"`
	FailWhy  string `json:"fail_why,omitempty"`
	// From the record, which no goto or reset rewrites: every failure of
	// theirs in the room, and the first failed step of the lesson open now
	// (since the last goto or reset): the root cause, where the last
	// failed step may be its consequence.
	FailedAll     int    `json:"failed_all"`
	FirstFailStep string `json:"first_fail_step,omitempty"`
	FirstFailWhy  string `json:"first_fail_why,omitempty"`
	// Challenges are the participant's challenge verdicts, by name (lab
	// challenge run --room, or the screen's challenge step).
	Challenges map[string]*progress.Challenge `json:"challenges,omitempty"`
}

// ChallengeLine is the participant's challenges in one line: "once ✓ (seeds
// 1,2), relay ✗", "" when none was run.
func (p Participant) ChallengeLine() string {
	names := make([]string, 0, len(p.Challenges))
	for n := range p.Challenges {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		c := p.Challenges[n]
		if c.Passed {
			seeds := make([]string, len(c.Seeds))
			for i, s := range c.Seeds {
				seeds[i] = strconv.FormatUint(s, 10)
			}
			out = append(out, fmt.Sprintf("%s ✓ (seed %s)", n, strings.Join(seeds, ",")))
		} else if c.Runs > 0 {
			out = append(out, fmt.Sprintf("%s ✗ (%d runs)", n, c.Runs))
		}
	}
	return strings.Join(out, ", ")
}

// MarshalJSON adds the state the screen shows (online, failing, stuck,
// done, offline), so the JSON reads as the room does.
func (p Participant) MarshalJSON() ([]byte, error) {
	type plain Participant
	return json.Marshal(struct {
		plain
		State string `json:"state"`
	}{plain(p), p.State()})
}

// StuckAfter is how long on one step, online and not done, reads as stuck.
const StuckAfter = 5 * time.Minute

// Participants lists the room in the order to walk over: online and
// failing first, then stuck, then those on their step longest; done ones
// after, offline ones last.
func (r *Room) Participants(ctx context.Context) ([]Participant, error) {
	rows, err := r.DB.QueryContext(ctx, `SELECT p.name, p.server, p.lesson, p.step, p.steps, p.passed, p.failed, p.verdicts, p.updated,
		TIMESTAMPDIFF(MICROSECOND, p.step_since, UTC_TIMESTAMP(6)), p.progress,
		COALESCE(s.beat > UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND AND s.server <> ?, FALSE)
		FROM participant p LEFT JOIN screen s ON s.name = p.name`, Stale.Microseconds(), Resetting)
	if err != nil {
		return nil, fmt.Errorf("room %s: %w", r.Name, err)
	}
	defer rows.Close()
	var out []Participant
	for rows.Next() {
		var p Participant
		var us int64
		var snap string
		if err := rows.Scan(&p.Name, &p.Server, &p.Lesson, &p.Step, &p.Steps, &p.Passed, &p.Failed, &p.Verdicts, &p.Updated, &us, &snap, &p.Online); err != nil {
			return nil, err
		}
		p.OnStep = time.Duration(us) * time.Microsecond
		var f progress.File
		if json.Unmarshal([]byte(snap), &f) == nil {
			if l := f.Lessons[p.Lesson]; l != nil {
				p.Done = l.Done
			}
			if p.Done && p.Step < p.Steps {
				// Sent back to a lesson they finished: it is done, every
				// step run ("done 0/40" read as nothing run).
				p.Step = p.Steps
			}
			p.FailStep, p.FailWhy = f.Activity.FailStep, f.Activity.FailWhy
			p.Challenges = f.Challenges
		}
		// The room's rows are text from outside this process (another
		// server, or anyone who could write the table): plain before any
		// terminal, page or file shows them.
		for _, s := range []*string{&p.Name, &p.Server, &p.Lesson, &p.Verdicts, &p.FailStep, &p.FailWhy} {
			*s = plain.Line(*s, 1024)
		}
		for n, c := range p.Challenges {
			if pn := plain.Line(n, 64); pn != n || n == "" {
				delete(p.Challenges, n)
				if pn != "" {
					p.Challenges[pn] = c
				}
			}
		}
		p.Stuck = p.Online && !p.Done && p.OnStep >= StuckAfter
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if err := r.fromRecord(ctx, out); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := rank(out[i]), rank(out[j]); a != b {
			return a < b
		}
		if out[i].OnStep != out[j].OnStep {
			return out[i].OnStep > out[j].OnStep
		}
		return out[i].Name < out[j].Name
	})
	return out, rows.Err()
}

// rank orders the room: what needs the instructor first.
func rank(p Participant) int {
	switch {
	case !p.Online:
		return 5
	case p.Done:
		return 4
	case p.FailStep != "":
		return 0
	case p.Stuck:
		return 1
	case p.Failed > 0:
		return 2
	}
	return 3
}

// State is a participant's presence in one word.
func (p Participant) State() string {
	switch {
	case !p.Online:
		return "offline"
	case p.Done:
		return "done"
	case p.FailStep != "":
		return "failing"
	case p.Stuck:
		return "stuck"
	}
	return "online"
}

// Self names this process in the room: host:port of its listener.
func Self(listen string) string {
	h, err := os.Hostname()
	if err != nil {
		h = "?"
	}
	return h + " " + listen
}

// Command is what the instructor asks of the room.
type Command struct {
	ID      int64
	Target  string // a participant, or "" for everyone
	Kind    string // goto (Arg: a lesson number or id), say (Arg: one line), end, timer
	Arg     string
	Created time.Time // the database's clock, as frames' At
}

// Kinds of command.
const (
	Goto  = "goto"
	Say   = "say"
	End   = "end"
	Timer = "timer" // Arg: the end, RFC 3339 in UTC, or "off"
)

// Send records a command for every server of the room to carry out.
func (r *Room) Send(ctx context.Context, c Command) error {
	switch c.Kind {
	case Goto, Say, End, Timer, Watch, Present:
	default:
		return fmt.Errorf("room command %q: use goto, say, end or timer", c.Kind)
	}
	// Plain text only, cut on a character: it reaches terminals.
	c.Arg = Plain(c.Arg, 255)
	c.Target = Plain(c.Target, 32)
	insert := func() error {
		_, err := r.DB.ExecContext(ctx, "INSERT INTO command (target, kind, arg, created) VALUES (?, ?, ?, UTC_TIMESTAMP(6))", c.Target, c.Kind, c.Arg)
		return err
	}
	err := insert()
	if err != nil && r.dropForgedCommands(ctx) {
		err = insert()
	}
	if err != nil {
		return fmt.Errorf("room %s: send %s: %w", r.Name, c.Kind, err)
	}
	if c.Kind == Goto {
		// A new attempt begins: the record keeps what came before.
		return r.Record(ctx, Event{Name: c.Target, Kind: EventGoto, Detail: c.Arg})
	}
	return nil
}

// forgedCommand is where the room's command ids end: no room sends 2^62
// commands, so a row from there on was written by hand. Servers never carry
// it out, and it would use up the ids (AUTO_INCREMENT stops at BIGINT's
// end) and, read, move every server's place past all later commands.
const forgedCommand = 1 << 62

// dropForgedCommands removes commands past forgedCommand and sets the ids
// back after the room's own, and says whether there were any.
func (r *Room) dropForgedCommands(ctx context.Context) bool {
	res, err := r.DB.ExecContext(ctx, "DELETE FROM command WHERE id >= ?", int64(forgedCommand))
	if n, _ := rowsAffected(res, err); n == 0 {
		return false
	}
	r.DB.ExecContext(ctx, "ALTER TABLE command AUTO_INCREMENT = 1") // InnoDB: the lowest it can, MAX(id)+1
	r.Audit(ctx, "refused commands with ids past 2^62, written by hand (lab room and lab serve never write them): removed")
	return true
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// LastCommand is the newest command's id: a server starting now carries out
// only what is sent after it.
func (r *Room) LastCommand(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := r.DB.QueryRowContext(ctx, "SELECT MAX(id) FROM command WHERE id < ?", int64(forgedCommand)).Scan(&id)
	return id.Int64, err
}

// Commands are those sent after id, in order (none past forgedCommand).
func (r *Room) Commands(ctx context.Context, after int64) ([]Command, error) {
	rows, err := r.DB.QueryContext(ctx, "SELECT id, target, kind, arg, created FROM command WHERE id > ? AND id < ? ORDER BY id", after, int64(forgedCommand))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Command
	for rows.Next() {
		var c Command
		if err := rows.Scan(&c.ID, &c.Target, &c.Kind, &c.Arg, &c.Created); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

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
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// SavesPerSecond bounds how often one participant's progress is written
// to the room: a screen saves at each step, and a participant driving
// steps as fast as keys repeat must not make the room's MySQL their
// load. A save sooner than that waits its turn.
const SavesPerSecond = 10

type saveRate struct {
	mu   sync.Mutex
	next map[string]time.Time
}

// wait holds a save of name until its turn (or ctx ends).
func (s *saveRate) wait(ctx context.Context, name string) error {
	s.mu.Lock()
	if s.next == nil {
		s.next = map[string]time.Time{}
	}
	now := time.Now()
	at := s.next[name]
	if at.Before(now) {
		at = now
	}
	s.next[name] = at.Add(time.Second / SavesPerSecond)
	if len(s.next) > 10000 {
		for k, v := range s.next {
			if v.Before(now) {
				delete(s.next, k)
			}
		}
	}
	s.mu.Unlock()
	if d := time.Until(at); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
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

// Store is participant's progress in the room.
func (r *Room) Store(participant string) progress.Store { return store{r, participant} }

type store struct {
	r    *Room
	name string
}

func (s store) Where() string { return "room " + s.r.Name + ", participant " + s.name }

func (s store) Load(ctx context.Context) (*progress.File, error) {
	var b string
	err := s.r.DB.QueryRowContext(ctx, "SELECT progress FROM participant WHERE name=?", s.name).Scan(&b)
	if err == sql.ErrNoRows {
		return progress.New(), nil
	}
	if err != nil {
		return progress.New(), fmt.Errorf("room %s: read %s's progress: %w", s.r.Name, s.name, err)
	}
	f := progress.New()
	if err := json.Unmarshal([]byte(b), f); err != nil {
		return progress.New(), fmt.Errorf("room %s: %s's progress: %w", s.r.Name, s.name, err)
	}
	if f.Lessons == nil {
		f.Lessons = map[string]*progress.Lesson{}
	}
	return f, nil
}

// Save writes the snapshot and the columns the room view sorts on, in one
// transaction: a participant's row is whole at every moment. A challenge
// the row holds newer than the snapshot's is kept: the participant's
// screen and a verdict given through the door both write the row.
func (s store) Save(ctx context.Context, snapshot []byte) error {
	if err := s.r.saves.wait(ctx, s.name); err != nil {
		return fmt.Errorf("room %s: save %s's progress: %w", s.r.Name, s.name, err)
	}
	var err error
	for try := 0; try < 3; try++ {
		if err = s.save(ctx, snapshot); err == nil || !services.Retryable(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("room %s: save %s's progress: %w", s.r.Name, s.name, err)
	}
	return nil
}

func (s store) save(ctx context.Context, snapshot []byte) error {
	var f progress.File
	if err := json.Unmarshal(snapshot, &f); err != nil {
		return err
	}
	// READ COMMITTED: the row's lock only, no gap lock that two first
	// saves of different names could deadlock on.
	tx, err := s.r.DB.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var held string
	old := progress.New()
	if err := tx.QueryRowContext(ctx, "SELECT progress FROM participant WHERE name=? FOR UPDATE", s.name).Scan(&held); err == nil {
		if json.Unmarshal([]byte(held), old) == nil {
			f.KeepNewerChallenges(old)
			if snapshot, err = json.Marshal(&f); err != nil {
				return err
			}
		}
	} else if err != sql.ErrNoRows {
		return err
	}
	// What this save shows happened, appended to the record in the same
	// transaction: a later goto or reset changes the row, never the record.
	for _, e := range happened(s.name, old, &f) {
		if err := record(ctx, tx, e); err != nil {
			return err
		}
	}
	a := f.Activity
	since := a.StepSince
	if since.IsZero() {
		since = time.Now()
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO participant
		(name, server, lesson, step, steps, step_since, passed, failed, verdicts, progress, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(6))
		ON DUPLICATE KEY UPDATE server=VALUES(server), lesson=VALUES(lesson), step=VALUES(step), steps=VALUES(steps),
		step_since=VALUES(step_since), passed=VALUES(passed), failed=VALUES(failed), verdicts=VALUES(verdicts),
		progress=VALUES(progress), updated=VALUES(updated)`,
		s.name, s.r.Server, a.Lesson, a.Step, a.Steps, since.UTC(), a.Passed, a.Failed, verdicts(a.Verdicts), string(snapshot))
	if err != nil {
		return err
	}
	return tx.Commit()
}

func verdicts(v map[string]string) string {
	var out []string
	for _, k := range []string{"unsafe", "safe"} {
		if x, ok := v[k]; ok {
			out = append(out, k+": "+x)
		}
	}
	return strings.Join(out, ", ")
}

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

// Tally counts the room's answers at each predict step it has seen:
// lesson id → predict name → option → participants (Polls, as a map).
func (r *Room) Tally(ctx context.Context) (map[string]map[string]map[string]int, error) {
	polls, err := r.Polls(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]map[string]int{}
	for _, p := range polls {
		if out[p.Lesson] == nil {
			out[p.Lesson] = map[string]map[string]int{}
		}
		out[p.Lesson][p.Name] = p.Answers
	}
	return out, nil
}

// Poll is the class's answers at one predict step.
type Poll struct {
	Lesson   string         `json:"lesson"`
	Name     string         `json:"name"`
	Answers  map[string]int `json:"answers"`  // option → participants
	Answered int            `json:"answered"` // participants who answered
	Reached  int            `json:"reached"`  // participants who opened the lesson
}

// Polls are the room's answers at every predict step any participant
// answered, with how many of those who opened its lesson did.
func (r *Room) Polls(ctx context.Context) ([]Poll, error) {
	rows, err := r.DB.QueryContext(ctx, "SELECT name, lesson, progress FROM participant")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type key struct{ name, lesson, poll string }
	picks := map[key]string{}
	reached := map[string]map[string]bool{} // lesson → who reached it (it is open, or they have progress in it)
	reach := func(lesson, name string) {
		if reached[lesson] == nil {
			reached[lesson] = map[string]bool{}
		}
		reached[lesson][name] = true
	}
	for rows.Next() {
		var name, open, b string
		if err := rows.Scan(&name, &open, &b); err != nil {
			return nil, err
		}
		name = plain.Line(name, 32)
		if open != "" {
			reach(plain.Line(open, 128), name) // open now, saved or not
		}
		var f progress.File
		if json.Unmarshal([]byte(b), &f) != nil {
			continue
		}
		// Text from outside this process, as Participants' rows are.
		for id, l := range f.Lessons {
			if l == nil {
				continue
			}
			id = plain.Line(id, 128)
			reach(id, name)
			for poll, pick := range l.Predictions {
				picks[key{name, id, plain.Line(poll, 128)}] = plain.Line(pick, 256)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The record holds every answer, those a reset forgot included: the
	// last answer of each participant at each poll counts.
	evs, err := r.DB.QueryContext(ctx, "SELECT name, lesson, step, detail FROM event WHERE kind='predict' ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("room %s: read its record: %w", r.Name, err)
	}
	defer evs.Close()
	for evs.Next() {
		var name, lesson, poll, pick string
		if err := evs.Scan(&name, &lesson, &poll, &pick); err != nil {
			return nil, err
		}
		name, lesson = plain.Line(name, 32), plain.Line(lesson, 128)
		picks[key{name, lesson, plain.Line(poll, 128)}] = plain.Line(pick, 256)
		reach(lesson, name)
	}
	if err := evs.Err(); err != nil {
		return nil, err
	}
	polls := map[[2]string]*Poll{}
	for k, pick := range picks {
		pk := [2]string{k.lesson, k.poll}
		if polls[pk] == nil {
			polls[pk] = &Poll{Lesson: k.lesson, Name: k.poll, Answers: map[string]int{}}
		}
		polls[pk].Answers[pick]++
		polls[pk].Answered++
	}
	var out []Poll
	for _, p := range polls {
		p.Reached = len(reached[p.Lesson])
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Lesson != out[j].Lesson {
			return out[i].Lesson < out[j].Lesson
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Forget deletes a participant's row, progress included: their next
// session starts the lessons afresh.
func (r *Room) Forget(ctx context.Context, name string) error {
	_, err := r.DB.ExecContext(ctx, "DELETE FROM participant WHERE name=?", name)
	return err
}

// ScreenClosed is how long a participant's session may take to end once
// asked: every server polls the commands each second, and a screen closes
// its run (workers killed, sessions rolled back) within 5 s.
const ScreenClosed = 7 * time.Second

// Reset starts a participant over: their session ends on whichever server
// it runs (their workers die with it), clean removes what their lessons
// created in their namespace, and their progress is forgotten. The reset
// holds the participant's screen while it runs: a reconnect meanwhile is
// told to retry, instead of starting in a namespace being dropped.
func (r *Room) Reset(ctx context.Context, name string, clean func(ctx context.Context, namespace string)) error {
	if err := r.Send(ctx, Command{Kind: End, Target: name}); err != nil {
		return err
	}
	// The screen is released when its session has closed its run, or goes
	// stale with a server that died.
	deadline := time.Now().Add(ScreenClosed + Stale)
	for {
		held, err := r.Claim(ctx, name, Resetting)
		if err != nil {
			return err
		}
		if held == "" {
			break
		}
		if time.Now().After(deadline) {
			on, _, _ := strings.Cut(held, "#") // server#session
			return fmt.Errorf("room %s: %s's screen on %s did not close within %s; nothing was reset", r.Name, name, on, ScreenClosed+Stale)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	defer r.Release(context.WithoutCancel(ctx), name, Resetting)
	clean(ctx, name)
	if err := r.Record(ctx, Event{Name: name, Kind: EventReset}); err != nil {
		return err
	}
	return r.Forget(ctx, name)
}

// KeepLessons records the lessons this server serves (id and number), so
// the room's instructor may send everyone to one of them whatever lessons
// the instructor's own lab has.
func (r *Room) KeepLessons(ctx context.Context, lessons map[string]int) error {
	for id, n := range lessons {
		if _, err := r.DB.ExecContext(ctx, "REPLACE INTO lesson (id, number, server) VALUES (?, ?, ?)", id, n, r.Server); err != nil {
			return fmt.Errorf("room %s: record lesson %s: %w", r.Name, id, err)
		}
	}
	return nil
}

// Lesson is the id of the lesson a server of the room serves under id or
// number, "" when none does.
func (r *Room) Lesson(ctx context.Context, idOrNumber string) (string, error) {
	var id string
	err := r.DB.QueryRowContext(ctx, "SELECT id FROM lesson WHERE id=? OR CAST(number AS CHAR)=? ORDER BY id LIMIT 1", idOrNumber, idOrNumber).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("room %s: look up lesson %s: %w", r.Name, idOrNumber, err)
	}
	return id, nil
}

// SetMeta records what the room's servers tell its instructor's lab.
func (r *Room) SetMeta(ctx context.Context, k, v string) error {
	if _, err := r.DB.ExecContext(ctx, "REPLACE INTO meta (k, v) VALUES (?, ?)", k, v); err != nil {
		return fmt.Errorf("room %s: record %s: %w", r.Name, k, err)
	}
	return nil
}

// Meta is what a server of the room recorded under k ("" for nothing).
func (r *Room) Meta(ctx context.Context, k string) (string, error) {
	var v string
	err := r.DB.QueryRowContext(ctx, "SELECT v FROM meta WHERE k=?", k).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("room %s: read %s: %w", r.Name, k, err)
	}
	return v, nil
}

// Names is everyone the room has seen: a participant's row or a screen
// claim (a name whose progress was never saved).
func (r *Room) Names(ctx context.Context) ([]string, error) {
	rows, err := r.DB.QueryContext(ctx, "SELECT name FROM participant UNION SELECT name FROM screen ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("room %s: read its participants: %w", r.Name, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// Drop removes the room's database (only one the lab made); its
// participants' namespaces and logins are the caller's to remove first.
func (r *Room) Drop(ctx context.Context, server *sql.DB) error {
	r.DB.Close()
	if _, err := services.DropOwned(ctx, server, DBName(r.Name)); err != nil {
		return err
	}
	return nil
}

// A participant's progress in the room: their row, written at most
// SavesPerSecond, and what each save adds to the record.

package room

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/services"
)

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
	// The row first, locked whether it is there or not: the first saves of
	// a participant (two servers of the room, a screen and a grading) each
	// found no row to lock and the later one's snapshot replaced the
	// earlier's verdicts. A save that finds the row being made waits here
	// for it, then reads it.
	if _, err := tx.ExecContext(ctx, `INSERT INTO participant
		(name, server, lesson, step, steps, step_since, passed, failed, verdicts, progress, updated)
		VALUES (?, ?, '', 0, 0, UTC_TIMESTAMP(6), 0, 0, '', '{}', UTC_TIMESTAMP(6))
		ON DUPLICATE KEY UPDATE name=name`, s.name, s.r.Server); err != nil {
		return err
	}
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

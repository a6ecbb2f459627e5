package room

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"time"

	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/progress"
)

// Event is one line of the debrief's record: appended as it happens,
// never rewritten.
type Event struct {
	At     time.Time `json:"at"`
	Name   string    `json:"name"` // the participant, "" for the whole room
	Kind   string    `json:"kind"` // fail | predict | goto | reset
	Lesson string    `json:"lesson"`
	Step   string    `json:"step"`   // the failed step, the prediction's name
	Detail string    `json:"detail"` // why it failed, the pick, the lesson sent to
}

// The kinds of the record.
const (
	EventFail    = "fail"
	EventPredict = "predict"
	EventGoto    = "goto"
	EventReset   = "reset"
)

// record appends e (text plain, cut to its column).
func record(ctx context.Context, x interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, e Event) error {
	_, err := x.ExecContext(ctx, "INSERT INTO event (at, name, kind, lesson, step, detail) VALUES (UTC_TIMESTAMP(6), ?, ?, ?, ?, ?)",
		Plain(e.Name, 32), e.Kind, Plain(e.Lesson, 64), Plain(e.Step, 128), Plain(e.Detail, 512))
	return err
}

// Record appends an instructor's act (goto, reset) to the record.
func (r *Room) Record(ctx context.Context, e Event) error {
	if err := record(ctx, r.DB, e); err != nil {
		return fmt.Errorf("room %s: record a %s: %w", r.Name, e.Kind, err)
	}
	return nil
}

// happened are the events a save of f over old adds: a failure the
// snapshot shows that old did not (a new failed step, or the count of
// failures grown), and each prediction old did not hold.
func happened(name string, old, f *progress.File) []Event {
	var out []Event
	a, o := f.Activity, old.Activity
	if a.FailStep != "" && (a.FailStep != o.FailStep || a.Lesson != o.Lesson || a.Failed > o.Failed) {
		out = append(out, Event{Name: name, Kind: EventFail, Lesson: a.Lesson, Step: a.FailStep, Detail: a.FailWhy})
	}
	ids := make([]string, 0, len(f.Lessons))
	for id := range f.Lessons {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		l := f.Lessons[id]
		if l == nil {
			continue
		}
		var was map[string]string
		if ol := old.Lessons[id]; ol != nil {
			was = ol.Predictions
		}
		picks := make([]string, 0, len(l.Predictions))
		for p := range l.Predictions {
			picks = append(picks, p)
		}
		sort.Strings(picks)
		for _, p := range picks {
			if was[p] != l.Predictions[p] {
				out = append(out, Event{Name: name, Kind: EventPredict, Lesson: id, Step: p, Detail: l.Predictions[p]})
			}
		}
	}
	return out
}

// Events is the whole record, oldest first (at most n lines, the newest).
func (r *Room) Events(ctx context.Context, n int) ([]Event, error) {
	rows, err := r.DB.QueryContext(ctx, "SELECT at, name, kind, lesson, step, detail FROM (SELECT * FROM event ORDER BY id DESC LIMIT ?) t ORDER BY id", n)
	if err != nil {
		return nil, fmt.Errorf("room %s: read its record: %w", r.Name, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.At, &e.Name, &e.Kind, &e.Lesson, &e.Step, &e.Detail); err != nil {
			return nil, err
		}
		// Written by this lab, but read back as any table's text is.
		e.Name, e.Lesson, e.Step, e.Detail = plain.Line(e.Name, 32), plain.Line(e.Lesson, 64), plain.Line(e.Step, 128), plain.Line(e.Detail, 512)
		out = append(out, e)
	}
	return out, rows.Err()
}

// fromRecord fills each participant's failures in the record: all of
// them, and the first of the lesson open now since their last goto or
// reset.
func (r *Room) fromRecord(ctx context.Context, ps []Participant) error {
	rows, err := r.DB.QueryContext(ctx, "SELECT id, name, kind, lesson, step, detail FROM event WHERE kind IN ('fail', 'goto', 'reset') ORDER BY id")
	if err != nil {
		return fmt.Errorf("room %s: read its record: %w", r.Name, err)
	}
	defer rows.Close()
	type first struct{ step, why string }
	all := map[string]int{}
	firsts := map[string]map[string]first{} // name → lesson → its first failure since the last goto or reset
	for rows.Next() {
		var id int64
		var name, kind, lesson, step, detail string
		if err := rows.Scan(&id, &name, &kind, &lesson, &step, &detail); err != nil {
			return err
		}
		switch kind {
		case EventFail:
			all[name]++
			if firsts[name] == nil {
				firsts[name] = map[string]first{}
			}
			if _, ok := firsts[name][lesson]; !ok {
				firsts[name][lesson] = first{step, detail}
			}
		default: // goto or reset: what came before is another attempt
			if name == "" {
				firsts = map[string]map[string]first{}
			} else {
				delete(firsts, name)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range ps {
		p := &ps[i]
		p.FailedAll = all[p.Name]
		if f, ok := firsts[p.Name][p.Lesson]; ok {
			p.FirstFailStep, p.FirstFailWhy = plain.Line(f.step, 128), plain.Line(f.why, 512)
		}
	}
	return nil
}

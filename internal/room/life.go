// A room's life past its first server: a participant's reset, the lessons
// and settings its servers record, and its end (Drop).

package room

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/services"
)

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

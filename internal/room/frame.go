package room

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/rmlab/lab/internal/plain"
)

// Watch is the command that asks the server holding a participant's screen
// to publish it (Arg: until when, RFC 3339 in UTC): the instructor's
// watch NAME renews it while the mirror is open, so a mirror nobody looks
// at any more stops costing.
const Watch = "watch"

// Present is the command that puts the instructor's presented lesson on
// every participant's screen, read-only (Arg: the lesson, or "off").
const Present = "present"

// Presenter is the name the presented screen is published under (in the
// room's own database), and the namespace its lesson runs in without a
// room (reserved: no participant can take it).
const Presenter = "presenter"

// PresenterNamespace is where room's presented lesson runs: one of its
// own, so that two rooms on one MySQL presenting at once never drop each
// other's databases ("presenter" and 7 hex digits of the room's name's
// hash; no participant can take a name starting with presenter).
func PresenterNamespace(room string) string {
	h := sha256.Sum256([]byte(room))
	return Presenter + hex.EncodeToString(h[:])[:7]
}

// DropFrame forgets name's published screen: a presentation that ended
// leaves nothing for the next to show.
func (r *Room) DropFrame(ctx context.Context, name string) error {
	_, err := r.DB.ExecContext(ctx, "DELETE FROM frame WHERE name=?", name)
	return err
}

// WatchFor is how long one watch command keeps a screen published.
const WatchFor = time.Minute

// Frame is a participant's screen as last drawn.
type Frame struct {
	Content       string
	Width, Height int
	At            time.Time
}

// PutFrame publishes name's screen.
func (r *Room) PutFrame(ctx context.Context, name string, f Frame) error {
	_, err := r.DB.ExecContext(ctx, `INSERT INTO frame (name, content, width, height, at) VALUES (?, ?, ?, ?, UTC_TIMESTAMP(6))
		ON DUPLICATE KEY UPDATE content=VALUES(content), width=VALUES(width), height=VALUES(height), at=VALUES(at)`,
		name, f.Content, f.Width, f.Height)
	if err != nil {
		return fmt.Errorf("room %s: publish %s's screen: %w", r.Name, name, err)
	}
	return nil
}

// Frame is name's screen as last published; ok is false when none is.
func (r *Room) Frame(ctx context.Context, name string) (f Frame, ok bool, err error) {
	err = r.DB.QueryRowContext(ctx, "SELECT content, width, height, at FROM frame WHERE name=?", name).Scan(&f.Content, &f.Width, &f.Height, &f.At)
	if errors.Is(err, sql.ErrNoRows) {
		return f, false, nil
	}
	// Whoever could write the table could put any escape in it: only the
	// screen's lines and colours reach a terminal.
	f.Content = plain.Screen(f.Content)
	return f, err == nil, err
}

package relay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// The mark: SENT, back to NEW with a back-off, or DEAD, each guarded by the
// lease token.

// mark writes every outcome of a pass back in one transaction, each
// statement guarded by the claim's token. A batch's confirmed events are
// marked in one statement; if it affects fewer rows than expected, the
// transaction is rolled back and the events are marked one by one, so the
// log says which claims changed hands.
func (r *Relay) mark(ctx context.Context, evs []Event, token string, results []result) error {
	batch := len(evs) > 1
	var lastErr error
	for try := 0; try < 5; try++ {
		lastErr = r.markOnce(ctx, evs, token, results, batch)
		if errors.Is(lastErr, errPartialMark) {
			batch = false
			continue
		}
		if lastErr == nil || !retryable(lastErr) {
			return lastErr
		}
		time.Sleep(time.Duration(10*(try+1)) * time.Millisecond)
	}
	return lastErr
}

var errPartialMark = errors.New("the batch mark affected fewer rows than confirmed events")

// markLine is one write-back's log line and the counter it adds to.
type markLine struct {
	line    string
	outcome *atomic.Int64
}

func (r *Relay) markOnce(ctx context.Context, evs []Event, token string, results []result, batch bool) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin the mark: %w", err)
	}
	defer tx.Rollback()
	var lines []markLine
	var confirmed []any
	for i, ev := range evs {
		if results[i].ok && batch {
			confirmed = append(confirmed, ev.ID)
			continue
		}
		l, err := r.markRow(ctx, tx, ev, token, results[i])
		if err != nil {
			return err
		}
		lines = append(lines, l)
	}
	if len(confirmed) > 0 {
		stmt := inList(r.st.MarkSentBatch, len(confirmed))
		args := append([]any{token}, confirmed...)
		res, err := tx.ExecContext(ctx, stmt, args...)
		if err != nil {
			return fmt.Errorf("mark (%s): %w", FileMarkSentBatch, err)
		}
		if n, _ := res.RowsAffected(); int(n) != len(confirmed) {
			return errPartialMark
		}
		line := ""
		if r.logs {
			line = fmt.Sprintf("%s: mark: %s → %d rows affected: SENT", r.cfg.Name, Render(stmt, args...), len(confirmed))
		}
		for range confirmed {
			lines = append(lines, markLine{line, &r.sent})
			line = ""
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit the mark: %w", err)
	}
	for _, l := range lines {
		if r.logs && l.line != "" {
			r.hooks.Logf("%s", l.line)
		}
		l.outcome.Add(1)
		if l.outcome != &r.retried {
			r.finished.Add(1)
		}
	}
	return nil
}

// markRow writes one event's outcome: SENT (relay_mark_sent.sql), or back to
// NEW or DEAD (relay_mark_failed.sql), guarded by the token.
func (r *Relay) markRow(ctx context.Context, tx *sql.Tx, ev Event, token string, res result) (markLine, error) {
	var stmt, what string
	var args []any
	var ctr *atomic.Int64
	if res.ok {
		stmt, args, what, ctr = r.st.MarkSent, []any{ev.ID, token}, "SENT", &r.sent
	} else {
		status, delay := "NEW", r.backoff(ev.Attempts)
		what, ctr = fmt.Sprintf("back to NEW, due again in %ds (attempt %d of %d)", delay, ev.Attempts, r.cfg.MaxAttempts), &r.retried
		if ev.Attempts >= r.cfg.MaxAttempts {
			status, delay = "DEAD", 0
			what, ctr = fmt.Sprintf("DEAD after %d attempts", ev.Attempts), &r.dead
		}
		stmt, args = r.st.MarkFailed, []any{status, delay, truncate(res.reason, maxErrorLength), ev.ID, token}
	}
	out, err := tx.ExecContext(ctx, stmt, args...)
	if err != nil {
		return markLine{}, fmt.Errorf("mark %s: %w", ev.ID, err)
	}
	n, _ := out.RowsAffected()
	line := ""
	if r.logs {
		line = fmt.Sprintf("%s: mark: %s → %d row%s affected", r.cfg.Name, Render(stmt, args...), n, plural(n))
	}
	switch {
	case n == 1:
		line += ": " + what
		switch {
		case res.ok:
			r.note("sent", ev.ID)
		case ctr == &r.dead:
			r.note("dead", ev.ID)
		}
	case ev.Unclaimed:
		// Its claim UPDATE matched nothing: there was never a lease to lose.
		line += ": this relay never claimed it (its claim UPDATE affected 0 rows), so no row carries its token: nothing written back"
		ctr = &r.unclaimed
	case r.cfg.FixedToken:
		// Every claim of this worker carries the same token, so 0 rows cannot
		// tell the scan or another relay from an older claim of its own.
		line += fmt.Sprintf(": no longer SENDING under token %s; with one token for all of %s's claims, this one cannot tell who changed it: not overwriting", token, r.cfg.WorkerName)
		ctr = &r.lost
	default:
		line += ": the claim changed hands (lease expired; another relay or the scan took it): not overwriting"
		ctr = &r.lost
	}
	return markLine{line, ctr}, nil
}

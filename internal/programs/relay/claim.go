package relay

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// The claim: a short transaction that locks due events (SKIP LOCKED or plain
// FOR UPDATE), leases them with a token and commits before anything is
// published.

// Claim runs the claim transaction and returns the events it now holds under
// token. A lock wait (--no-skip-locked) happens inside the SELECT.
func (r *Relay) Claim(ctx context.Context) ([]Event, string, error) {
	token := r.token()
	work := context.WithoutCancel(ctx)
	tx, err := r.db.BeginTx(work, nil)
	if err != nil {
		return nil, "", fmt.Errorf("begin the claim: %w", err)
	}
	defer tx.Rollback()
	start := time.Now()
	rows, err := tx.QueryContext(work, r.st.ClaimSelect, r.cfg.Batch)
	if err != nil {
		if retryable(err) {
			r.hooks.Logf("%s: claim: %v; trying again", r.cfg.Name, err)
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("claim select (%s): %w", FileClaimSelect, err)
	}
	var evs []Event
	for rows.Next() {
		var ev Event
		if err := rows.Scan(&ev.ID, &ev.AggregateID, &ev.Type, &ev.Payload, &ev.Attempts); err != nil {
			rows.Close()
			return nil, "", fmt.Errorf("read a claimed row: %w", err)
		}
		evs = append(evs, ev)
	}
	if err := rows.Err(); err != nil {
		if retryable(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("claim select: %w", err)
	}
	waited := time.Since(start)
	if len(evs) == 0 {
		if waited > 500*time.Millisecond {
			r.hooks.Logf("%s: claim: waited %s on locks, then found nothing due", r.cfg.Name, waited.Round(time.Millisecond))
		}
		return nil, "", nil
	}
	r.selects.Add(1) // a claim that found rows; empty polls would dilute the figure
	r.selectNanos.Add(int64(waited))
	if r.cfg.Verbose {
		ids := make([]string, len(evs))
		for i, ev := range evs {
			ids[i] = ev.ID
		}
		w := ""
		if waited > 500*time.Millisecond {
			w = fmt.Sprintf(" after waiting %s on locks", waited.Round(time.Millisecond))
		}
		r.hooks.Logf("%s: claim: %s → %s%s", r.cfg.Name, Render(r.st.ClaimSelect, r.cfg.Batch), strings.Join(ids, ", "), w)
	}
	if err := r.hooks.Reach(ctx, PointClaimLocked); err != nil {
		return nil, "", err
	}
	var kept []Event
	if len(evs) > 1 && !r.cfg.UnsafeClaim {
		kept, err = r.claimBatch(work, tx, evs, token)
	} else {
		kept, err = r.claimRows(work, tx, evs, token)
	}
	if err != nil {
		if retryable(err) {
			r.hooks.Logf("%s: claim: %v; trying again", r.cfg.Name, err)
			return nil, "", nil
		}
		return nil, "", err
	}
	if err := tx.Commit(); err != nil {
		if retryable(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("commit the claim: %w", err)
	}
	var held, unheld []Event
	for _, ev := range kept {
		if ev.Unclaimed {
			unheld = append(unheld, ev)
		} else {
			held = append(held, ev)
		}
	}
	r.claimed.Add(int64(len(held)))
	if len(held) > 0 && r.logs {
		r.hooks.Logf("%s: claimed %s with lease token %s for %ds (attempt %s), committed", r.cfg.Name, eventList(held), token, r.cfg.LeaseSeconds, attemptList(held))
	}
	if len(unheld) > 0 {
		r.hooks.Logf("%s: committed without a claim on %s (no row carries token %s): publishing anyway (unsafe)", r.cfg.Name, eventList(unheld), token)
	}
	return kept, token, nil
}

// claimRows writes the claim one row at a time (relay_claim_update.sql),
// checking that each UPDATE affected exactly one row.
func (r *Relay) claimRows(ctx context.Context, tx *sql.Tx, evs []Event, token string) ([]Event, error) {
	var kept []Event
	for _, ev := range evs {
		args := []any{token, r.cfg.LeaseSeconds, ev.ID}
		res, err := tx.ExecContext(ctx, r.st.ClaimUpdate, args...)
		if err != nil {
			return nil, fmt.Errorf("claim update (%s): %w", FileClaimUpdate, err)
		}
		n, _ := res.RowsAffected()
		if r.cfg.Verbose || n != 1 {
			r.hooks.Logf("%s: claim: %s → %d row%s affected", r.cfg.Name, Render(r.st.ClaimUpdate, args...), n, plural(n))
		}
		if n != 1 && r.cfg.UnsafeClaim {
			r.hooks.Logf("%s: claim: %s: rows affected not checked (unsafe): publishing it anyway", r.cfg.Name, ev.ID)
			ev.Unclaimed = true
		} else if n != 1 {
			// Only with plain FOR UPDATE can the row have changed while we
			// waited for it; skip it rather than publish what is not ours.
			r.hooks.Logf("%s: claim: %s is no longer NEW; not ours, skipped", r.cfg.Name, ev.ID)
			continue
		}
		ev.Attempts++
		kept = append(kept, ev)
	}
	return kept, nil
}

// claimBatch writes the claim of a batch in one statement
// (relay_claim_update_batch.sql). When it affected fewer rows than were
// selected, the rows carrying this claim's token are the ones it holds.
func (r *Relay) claimBatch(ctx context.Context, tx *sql.Tx, evs []Event, token string) ([]Event, error) {
	args := []any{token, r.cfg.LeaseSeconds}
	for _, ev := range evs {
		args = append(args, ev.ID)
	}
	stmt := inList(r.st.ClaimUpdateBatch, len(evs))
	res, err := tx.ExecContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("claim update (%s): %w", FileClaimUpdateBatch, err)
	}
	n, _ := res.RowsAffected()
	if r.cfg.Verbose {
		r.hooks.Logf("%s: claim: %s → %d row%s affected", r.cfg.Name, Render(stmt, args...), n, plural(n))
	}
	if int(n) == len(evs) {
		for i := range evs {
			evs[i].Attempts++
		}
		return evs, nil
	}
	r.hooks.Logf("%s: claim: %d of %d selected rows were still NEW; keeping only those", r.cfg.Name, n, len(evs))
	rows, err := tx.QueryContext(ctx, r.st.ClaimedIDs, token)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	mine := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		mine[id] = true
	}
	var kept []Event
	for _, ev := range evs {
		if mine[ev.ID] {
			ev.Attempts++
			kept = append(kept, ev)
		}
	}
	return kept, rows.Err()
}

// inList widens the single "IN (?)" of a batch statement to n placeholders.
func inList(stmt string, n int) string {
	return strings.Replace(stmt, "IN (?)", "IN (?"+strings.Repeat(",?", n-1)+")", 1)
}

package consumer

import (
	"context"
	"fmt"
)

// The strategies that commit the mark and the points in two transactions
// (unsafe: a crash between them loses or repeats one), and applying each
// effect.

// markFirst commits the mark, then the effect, in two transactions.
func (h *handling) markFirst(ctx context.Context) (Result, error) {
	tx, err := h.begin(ctx, true)
	if err != nil {
		return Result{}, err
	}
	dup, err := h.insertMark(ctx, tx)
	if err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if dup {
		tx.Rollback()
		return Result{Outcome: Absorbed, Detail: fmt.Sprintf("duplicate absorbed: the mark %s/%s exists, so this consumer treats the work as done; nothing written",
			h.c.Name, h.key())}, nil
	}
	if err := h.c.reach(ctx, "after-mark"); err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if err := h.commit(ctx, tx); err != nil {
		return Result{}, err
	}
	h.c.logf("mark %s/%s committed (transaction 1 of 2)", h.c.Name, h.key())
	if err := h.c.reach(ctx, "after-mark-commit"); err != nil {
		return Result{}, err
	}
	tx, err = h.begin(ctx, false)
	if err != nil {
		return Result{}, err
	}
	if err := h.effect(ctx, tx); err != nil {
		tx.Rollback()
		return Result{}, fmt.Errorf("%w; the mark is already committed", err)
	}
	if err := h.c.reach(ctx, "after-update"); err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if err := tx.Commit(); err != nil {
		return Result{}, h.c.dbErr("COMMIT", err)
	}
	h.c.logf("effect committed (transaction 2 of 2)")
	if err := h.c.reach(ctx, "after-points-commit"); err != nil {
		return Result{}, err
	}
	if err := h.c.reach(ctx, "after-commit"); err != nil {
		return Result{}, err
	}
	return Result{Outcome: Applied, Detail: h.appliedText()}, nil
}

// pointsFirst checks for a mark, commits the effect, then the mark.
func (h *handling) pointsFirst(ctx context.Context) (Result, error) {
	var n int
	if err := h.c.DB.QueryRowContext(ctx, stmtMarkCount, h.c.Name, h.key()).Scan(&n); err != nil {
		return Result{}, h.c.dbErr("SELECT the mark", err)
	}
	if n > 0 {
		return Result{Outcome: Absorbed, Detail: fmt.Sprintf("duplicate absorbed: the mark %s/%s exists; nothing written", h.c.Name, h.key())}, nil
	}
	tx, err := h.begin(ctx, true)
	if err != nil {
		return Result{}, err
	}
	if err := h.effect(ctx, tx); err != nil {
		tx.Rollback()
		return Result{}, fmt.Errorf("%w; rolled back", err)
	}
	if err := h.c.reach(ctx, "after-update"); err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if err := h.commit(ctx, tx); err != nil {
		return Result{}, err
	}
	h.c.logf("effect committed (transaction 1 of 2)")
	if err := h.c.reach(ctx, "after-points-commit"); err != nil {
		return Result{}, err
	}
	tx, err = h.begin(ctx, false)
	if err != nil {
		return Result{}, err
	}
	dup, err := h.insertMark(ctx, tx)
	if err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if dup {
		// Another delivery got here in between: the effect ran twice.
		tx.Rollback()
		return Result{Outcome: Applied, Detail: h.appliedText() + "; the mark already existed, so the effect ran twice"}, nil
	}
	if err := h.c.reach(ctx, "after-mark"); err != nil {
		tx.Rollback()
		return Result{}, err
	}
	if err := tx.Commit(); err != nil {
		return Result{}, h.c.dbErr("COMMIT", err)
	}
	h.c.logf("mark %s/%s committed (transaction 2 of 2)", h.c.Name, h.key())
	if err := h.c.reach(ctx, "after-mark-commit"); err != nil {
		return Result{}, err
	}
	if err := h.c.reach(ctx, "after-commit"); err != nil {
		return Result{}, err
	}
	return Result{Outcome: Applied, Detail: h.appliedText()}, nil
}

// applyEach is none and newer-version: no mark at all, the effect alone in
// one transaction for every delivery. Whatever guard there is lives in the
// effect (newer-version's version<?).
func (h *handling) applyEach(ctx context.Context) (Result, error) {
	if err := h.effectTx(ctx); err != nil {
		return Result{}, err
	}
	if h.stale != "" {
		return Result{Outcome: Stale, Detail: h.stale}, nil
	}
	return Result{Outcome: Applied, Detail: h.appliedText()}, nil
}

// effectTx writes only the effect, in one transaction (the Redis strategies,
// none and newer-version keep no mark in the database).
func (h *handling) effectTx(ctx context.Context) error {
	tx, err := h.begin(ctx, true)
	if err != nil {
		return err
	}
	if err := h.effect(ctx, tx); err != nil {
		tx.Rollback()
		return fmt.Errorf("%w; rolled back", err)
	}
	if err := h.c.reach(ctx, "after-update"); err != nil {
		tx.Rollback()
		return err
	}
	if err := h.commit(ctx, tx); err != nil {
		return err
	}
	return h.c.reach(ctx, "after-commit")
}

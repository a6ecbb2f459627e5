package producer

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// EventID is the outbox event id of order id in place mode.
func EventID(order int64) string { return fmt.Sprintf("order-%d-paid", order) }

// place commits orders From..From+Place-1, one article transaction each
// (purchase_order and its outbox_event row), at a steady rate, and
// publishes nothing: that is the relays' work. Each order credits one point
// to an account of its own (user id = order id), so a checker can count how
// many times each order's effect was applied. The payload carries no
// event_id: the event id travels as the message id, as the relay sends it,
// so a relay that changes the message id per attempt is seen as such.
//
// Restarted after a kill, it goes on after the highest order committed:
// an order whose transaction the kill cut is placed again, as a client
// whose request failed would retry it.
func (pr *Producer) place(ctx context.Context) error {
	o := pr.O
	last := o.From + int64(o.Place) - 1
	var next int64
	err := pr.DB.QueryRowContext(ctx, stmtLastOrder,
		o.From-1, o.From, last).Scan(&next)
	if err != nil {
		return fmt.Errorf("SELECT the last order placed: %w", err)
	}
	next++
	if next > o.From {
		pr.P.Logf("orders %d..%d were committed before; going on from %d", o.From, next-1, next)
	}
	if o.OrderEvents {
		// An order a kill left CREATED is paid now, as the shop would.
		if err := pr.payCreated(ctx, o.From, last); err != nil {
			return err
		}
	}
	every := time.Duration(float64(time.Second) / o.Rate)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for id := next; id <= last; id++ {
		if err := pr.placeOne(ctx, id); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		select {
		case <-ctx.Done():
			pr.P.Logf("stopping (SIGTERM) after order %d", id)
			return nil
		case <-tick.C:
		}
	}
	pr.P.Logf("placed orders %d..%d", o.From, last)
	return nil
}

func (pr *Producer) placeOne(ctx context.Context, id int64) error {
	if pr.O.OrderEvents {
		return pr.placeAndPay(ctx, id)
	}
	tx, err := pr.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("START TRANSACTION: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, stmtOrderInsert, id, "PAID"); err != nil {
		return fmt.Errorf("INSERT INTO purchase_order VALUES(%d,'PAID'): %w", id, err)
	}
	_, err = tx.ExecContext(ctx, stmtEventInsert, EventID(id), id, "OrderPaid",
		payload(paidPayload{BusinessKey: fmt.Sprintf("order:%d:paid", id), UserID: id, Amount: 1}))
	if err != nil {
		return fmt.Errorf("INSERT INTO outbox_event (%s): %w", EventID(id), err)
	}
	for _, r := range []struct {
		every  int
		suffix string
		amount int64
	}{{pr.O.ResendEvery, "-resent", 1}, {pr.O.ConflictEvery, "-conflict", pr.O.ConflictAmount}} {
		if r.every <= 0 || id%int64(r.every) != 0 {
			continue
		}
		_, err = tx.ExecContext(ctx, stmtEventInsert, EventID(id)+r.suffix, id, "OrderPaid",
			payload(paidPayload{BusinessKey: fmt.Sprintf("order:%d:paid", id), UserID: id, Amount: r.amount}))
		if err != nil {
			return fmt.Errorf("INSERT INTO outbox_event (%s%s): %w", EventID(id), r.suffix, err)
		}
	}
	if err := pr.P.Reach(ctx, "before-commit"); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("COMMIT order %d: %w", id, err)
	}
	pr.P.Note("committed", EventID(id))
	return pr.P.Reach(ctx, "after-commit")
}

// OrderEventID is the event id of order id's event of status (created,
// paid) in --order-events mode.
func OrderEventID(order int64, status string) string {
	return fmt.Sprintf("order-%d-%s", order, strings.ToLower(status))
}

// placeAndPay commits order id as CREATED with its event (version 1), then
// in a second transaction as PAID with its event (version 2).
func (pr *Producer) placeAndPay(ctx context.Context, id int64) error {
	err := pr.orderTx(ctx, id, 1, "CREATED", stmtOrderInsert, id, "CREATED")
	if err != nil {
		return err
	}
	pr.P.Note("committed", OrderEventID(id, "CREATED"))
	if err := pr.orderTx(ctx, id, 2, "PAID", stmtOrderPay, id); err != nil {
		return err
	}
	pr.P.Note("committed", OrderEventID(id, "PAID"))
	return pr.P.Reach(ctx, "after-commit")
}

// orderTx is one of an order's transactions: the order's row and its event.
func (pr *Producer) orderTx(ctx context.Context, id, version int64, status, stmt string, args ...any) error {
	tx, err := pr.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("START TRANSACTION: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
		return fmt.Errorf("order %d %s: %w", id, status, err)
	}
	_, err = tx.ExecContext(ctx, stmtEventInsert, OrderEventID(id, status), id, "Order"+status[:1]+strings.ToLower(status[1:]),
		payload(orderPayload{OrderID: id, Version: version, Status: status}))
	if err != nil {
		return fmt.Errorf("INSERT INTO outbox_event (%s): %w", OrderEventID(id, status), err)
	}
	if err := pr.P.Reach(ctx, "before-commit"); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("COMMIT order %d %s: %w", id, status, err)
	}
	return nil
}

// payCreated pays the orders of the range that are still CREATED.
func (pr *Producer) payCreated(ctx context.Context, from, to int64) error {
	rows, err := pr.DB.QueryContext(ctx, stmtCreatedOrders, from, to)
	if err != nil {
		return fmt.Errorf("SELECT the orders left CREATED: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		if err := pr.orderTx(ctx, id, 2, "PAID", stmtOrderPay, id); err != nil {
			return err
		}
		pr.P.Note("committed", OrderEventID(id, "PAID"))
	}
	return nil
}

package consumer_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/programs/consumer"
)

// orderView creates order_view as lesson 28 does (one row per consumer and
// order) with the given rows at status NONE, version 0.
func orderView(t *testing.T, db *sql.DB, rows ...string) {
	t.Helper()
	if _, err := db.Exec(`CREATE TABLE order_view (
consumer VARCHAR(64) NOT NULL,
order_id BIGINT NOT NULL,
status VARCHAR(16) NOT NULL,
version INT NOT NULL,
PRIMARY KEY(consumer,order_id)
) ENGINE=InnoDB`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if _, err := db.Exec("INSERT INTO order_view VALUES(" + r + ",'NONE',0)"); err != nil {
			t.Fatal(err)
		}
	}
}

func orderEvent(ev string, order, version int64, status string) consumer.Message {
	return consumer.Message{EventID: ev, OrderID: order, Version: version, Status: status}
}

func viewOf(t *testing.T, db *sql.DB, name string, order int64) string {
	t.Helper()
	var status string
	var version int64
	if err := db.QueryRow("SELECT status,version FROM order_view WHERE consumer=? AND order_id=?", name, order).Scan(&status, &version); err != nil {
		t.Fatalf("view of order %d for %s: %v", order, name, err)
	}
	return fmt.Sprintf("%s %d", status, version)
}

func TestNoneStrategyOverwritesTheViewInArrivalOrder(t *testing.T) {
	db := resetDB(t)
	orderView(t, db, "'overwrite',42", "'other',42")
	c, out := newConsumer(t, consumer.None, "overwrite", consumer.EffectOrderView)
	// Paid arrives first, created second: the order two relays produced.
	for _, m := range []consumer.Message{orderEvent("order-42-paid-v2", 42, 2, "PAID"), orderEvent("order-42-created-v1", 42, 1, "CREATED")} {
		if r := handle(t, c, m); r.Outcome != consumer.Applied {
			t.Fatalf("%s: %+v", m, r)
		}
	}
	if v := viewOf(t, db, "overwrite", 42); v != "CREATED 1" {
		t.Fatalf("view %q, want CREATED 1 (the older event overwrote the newer)", v)
	}
	if v := viewOf(t, db, "other", 42); v != "NONE 0" {
		t.Fatalf("another consumer's view changed: %q", v)
	}
	if !strings.Contains(out.String(), "UPDATE order_view SET status='CREATED',version=1 WHERE consumer='overwrite' AND order_id=42 → 1 row affected") {
		t.Fatalf("the statement is not logged:\n%s", out)
	}
	// The same event again changes no value; MySQL reports 0 changed rows,
	// which is not a missing row.
	if r := handle(t, c, orderEvent("order-42-created-v1", 42, 1, "CREATED")); r.Outcome != consumer.Applied {
		t.Fatalf("the same event again: %+v", r)
	}
}

func TestVersionStrategyIgnoresAStaleVersion(t *testing.T) {
	db := resetDB(t)
	orderView(t, db, "'versioned',42")
	c, _ := newConsumer(t, consumer.NewerVersion, "versioned", consumer.EffectOrderView)
	if r := handle(t, c, orderEvent("order-42-paid-v2", 42, 2, "PAID")); r.Outcome != consumer.Applied {
		t.Fatalf("version 2 over 0: %+v", r)
	}
	r := handle(t, c, orderEvent("order-42-created-v1", 42, 1, "CREATED"))
	if r.Outcome != consumer.Stale || !strings.Contains(r.Detail, "stale version 1 ignored (view holds 2)") {
		t.Fatalf("version 1 after 2: %+v", r)
	}
	if v := viewOf(t, db, "versioned", 42); v != "PAID 2" {
		t.Fatalf("view %q, want PAID 2", v)
	}
	r = handle(t, c, orderEvent("order-42-paid-v2", 42, 2, "PAID"))
	if r.Outcome != consumer.Stale || !strings.Contains(r.Detail, "version 2 already applied (view holds 2)") {
		t.Fatalf("a repeat of version 2: %+v", r)
	}
}

func TestOrderViewReportsAMissingRowOrTable(t *testing.T) {
	db := resetDB(t)
	c, _ := newConsumer(t, consumer.None, "overwrite", consumer.EffectOrderView)
	_, err := c.Handle(context.Background(), orderEvent("order-42-paid-v2", 42, 2, "PAID"), nil)
	if err == nil || !strings.Contains(err.Error(), "table order_view does not exist") {
		t.Fatalf("no table: %v", err)
	}
	orderView(t, db, "'someone-else',42")
	for _, s := range []consumer.Strategy{consumer.None, consumer.NewerVersion} {
		c, _ := newConsumer(t, s, "overwrite", consumer.EffectOrderView)
		_, err := c.Handle(context.Background(), orderEvent("order-42-paid-v2", 42, 2, "PAID"), nil)
		if !errors.Is(err, consumer.ErrNoView) || !strings.Contains(err.Error(), "INSERT INTO order_view VALUES('overwrite',42,'NONE',0)") {
			t.Fatalf("%s without a row: %v", s, err)
		}
	}
}

func TestOrderViewRefusesStrategiesThatMarkABusinessKey(t *testing.T) {
	resetDB(t)
	c, _ := newConsumer(t, consumer.OneTx, "overwrite", consumer.EffectOrderView)
	if _, err := c.Handle(context.Background(), orderEvent("order-42-paid-v2", 42, 2, "PAID"), nil); err == nil {
		t.Fatal("one-tx with order-view handled an order event")
	}
}

package relay_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/programs/relay"
)

// Claims, leases and tokens: which relay may write an event back, and what
// the lease scan does with the claims whose lease ran out.

func TestMarkWithAStaleTokenAffectsNoRowAndIsNotCountedAsSent(t *testing.T) {
	f := setup(t)
	f.insert(t, 42)
	hold := newHold(relay.PointAfterConfirm)
	a := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, LeaseSeconds: 1, Once: true}, nil, hold)
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	<-hold.reached
	time.Sleep(1500 * time.Millisecond) // A's lease runs out while it is held
	b := f.relay(t, relay.Config{Name: "relay-B", SkipLocked: true, ScanDelay: 0, Count: 1, Poll: 20 * time.Millisecond}, nil, nil)
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := a.Counts(); c.Lost != 1 || c.Sent != 0 {
		t.Fatalf("relay A counts %+v, want the mark lost\n%s", c, hold.log())
	}
	if !strings.Contains(hold.log(), "→ 0 rows affected: the claim changed hands") {
		t.Errorf("A's log does not say the mark affected 0 rows:\n%s", hold.log())
	}
	if st, att, _ := f.status(t, "order-42-created-v1"); st != "SENT" || att != 2 {
		t.Fatalf("status %s after %d attempts, want SENT after 2", st, att)
	}
	if n := f.ready(t); n != 2 {
		t.Fatalf("the broker holds %d messages, want 2 (both relays published)", n)
	}
}

func TestSkipLockedTakesTheNextRowWhilePlainForUpdateWaits(t *testing.T) {
	for _, skip := range []bool{true, false} {
		t.Run(fmt.Sprintf("skip-locked=%v", skip), func(t *testing.T) {
			f := setup(t)
			f.insert(t, 1, 2)
			hold := newHold(relay.PointClaimLocked)
			a := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: skip}, nil, hold)
			got := make(chan []relay.Event, 1)
			go func() {
				evs, _, err := a.Claim(context.Background())
				if err != nil {
					t.Error(err)
				}
				got <- evs
			}()
			<-hold.reached
			b := f.relay(t, relay.Config{Name: "relay-B", SkipLocked: skip}, nil, nil)
			bGot := make(chan []relay.Event, 1)
			var bDone time.Time // when B's claim returned
			go func() {
				evs, _, err := b.Claim(context.Background())
				if err != nil {
					t.Error(err)
				}
				bDone = time.Now()
				bGot <- evs
			}()
			const held = 700 * time.Millisecond
			var bEvs []relay.Event
			select {
			case bEvs = <-bGot:
				if !skip {
					t.Fatalf("with plain FOR UPDATE relay B claimed %v while A held the lock", bEvs)
				}
			case <-time.After(held):
				if skip {
					t.Fatalf("with SKIP LOCKED relay B still waits after %s", held)
				}
			}
			released := time.Now()
			close(hold.release)
			aEvs := <-got
			if bEvs == nil {
				bEvs = <-bGot
			}
			if len(aEvs) != 1 || aEvs[0].ID != "order-1-created-v1" {
				t.Fatalf("A claimed %v", aEvs)
			}
			if len(bEvs) != 1 || bEvs[0].ID != "order-2-created-v1" {
				t.Fatalf("B claimed %v, want the next row", bEvs)
			}
			// Plain FOR UPDATE: B's claim returned only once A let go of
			// its lock; SKIP LOCKED: before.
			if after := bDone.After(released); after != !skip {
				t.Fatalf("skip-locked=%v: B's claim returned %s A released its lock", skip, map[bool]string{true: "after", false: "before"}[after])
			}
		})
	}
}

func TestOrderedClaimHoldsBackALaterEventOfTheSameAggregate(t *testing.T) {
	f := setup(t)
	if _, err := f.db.Exec(`INSERT INTO outbox_event (event_id,aggregate_id,event_type,payload,status,available_at,created_at) VALUES
		('order-42-created-v1',42,'OrderCreated',JSON_OBJECT('orderId',42,'version',1),'NEW',NOW(6),NOW(6)),
		('order-42-paid-v2',42,'OrderPaid',JSON_OBJECT('orderId',42,'version',2),'NEW',NOW(6),DATE_ADD(NOW(6),INTERVAL 1 MICROSECOND)),
		('order-43-created-v1',43,'OrderCreated',JSON_OBJECT('orderId',43,'version',1),'NEW',NOW(6),NOW(6))`); err != nil {
		t.Fatal(err)
	}
	a := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, Ordered: true, Batch: 10}, nil, nil)
	evs, _, err := a.Claim(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range evs {
		ids = append(ids, ev.ID)
	}
	if strings.Join(ids, ",") != "order-42-created-v1,order-43-created-v1" {
		t.Fatalf("claimed %v; the paid event must wait for the created one", ids)
	}
	evs, _, err = f.relay(t, relay.Config{Name: "relay-B", SkipLocked: true, Ordered: true, Batch: 10}, nil, nil).Claim(context.Background())
	if err != nil || len(evs) != 0 {
		t.Fatalf("relay B claimed %v (%v) while order 42's created event is in flight", evs, err)
	}
}

func TestBatchClaimAndMarkWriteAllRowsAtOnceAndFallBackWhenClaimsChangedHands(t *testing.T) {
	f := setup(t)
	f.insert(t, 1, 2, 3)
	r := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, Batch: 3, Once: true}, nil, nil)
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if c := r.Counts(); c.Claimed != 3 || c.Sent != 3 || c.ClaimSelects != 1 {
		t.Fatalf("one batch pass: %+v, want 3 claimed and sent by one claim SELECT", c)
	}
	// One mark statement: NOW(6) is the statement's time, the same on
	// every row it wrote; marks one by one (Batch 1) differ.
	if n := f.sentAts(t, 1, 2, 3); n != 1 {
		t.Fatalf("the batch's three rows carry %d different sent_at, want 1 (one UPDATE)", n)
	}
	f.insert(t, 6, 7, 8)
	one := f.relay(t, relay.Config{Name: "relay-1", SkipLocked: true, Batch: 1, Count: 3, Poll: 20 * time.Millisecond}, nil, nil)
	if err := one.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.sentAts(t, 6, 7, 8); n != 3 {
		t.Fatalf("marks one by one left %d different sent_at, want 3", n)
	}

	f.insert(t, 4, 5)
	hold := newHold(relay.PointAfterConfirm)
	a := f.relay(t, relay.Config{Name: "relay-A", SkipLocked: true, Batch: 2, LeaseSeconds: 1, Once: true}, nil, hold)
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	<-hold.reached
	go func() { // the second event of the batch reaches the point too
		<-hold.reached
	}()
	time.Sleep(1500 * time.Millisecond)
	b := f.relay(t, relay.Config{Name: "relay-B", SkipLocked: true, ScanDelay: 0, Count: 2, Poll: 20 * time.Millisecond}, nil, nil)
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := a.Counts(); c.Lost != 2 || c.Sent != 0 {
		t.Fatalf("relay A %+v, want both marks lost\n%s", c, hold.log())
	}
	for _, id := range []string{"order-4-created-v1", "order-5-created-v1"} {
		if st, att, _ := f.status(t, id); st != "SENT" || att != 2 {
			t.Errorf("%s: %s after %d attempts", id, st, att)
		}
	}
}

// Two relays running as one worker (threads, or a restart while the old
// process hangs): the first stalls past its lease with a confirmed publish,
// the second re-claims, and then the first writes back.
func TestStaleWriteBackOfTheSameWorkerMatchesItsNewerClaimOnlyWithAFixedNameToken(t *testing.T) {
	for _, fixed := range []bool{true, false} {
		t.Run(fmt.Sprintf("fixed-name=%v", fixed), func(t *testing.T) {
			f := setup(t)
			f.insert(t, 44)
			const ev = "order-44-created-v1"
			cfg := func(name string) relay.Config {
				return relay.Config{Name: name, WorkerName: "worker-C", FixedToken: fixed, SkipLocked: true,
					LeaseSeconds: 1, ScanDelay: 0, Once: true}
			}
			h1, h2 := newHold(relay.PointAfterConfirm), newHold(relay.PointAfterConfirm)
			c1, c2 := f.relay(t, cfg("relay-C1"), nil, h1), f.relay(t, cfg("relay-C2"), nil, h2)
			done1, done2 := make(chan error, 1), make(chan error, 1)
			go func() { done1 <- c1.Run(context.Background()) }()
			<-h1.reached
			first := f.token(t, ev)
			time.Sleep(1500 * time.Millisecond) // C1's lease runs out while it stalls
			go func() { done2 <- c2.Run(context.Background()) }()
			<-h2.reached // C2's scan reset the row and C2 claimed it again
			second := f.token(t, ev)
			if fixed != (first == second) {
				t.Fatalf("C1's token %q, C2's %q: fixed-name=%v", first, second, fixed)
			}
			close(h1.release)
			if err := <-done1; err != nil {
				t.Fatal(err)
			}
			close(h2.release)
			if err := <-done2; err != nil {
				t.Fatal(err)
			}
			a, b := c1.Counts(), c2.Counts()
			if fixed && (a.Sent != 1 || b.Lost != 1) {
				t.Fatalf("fixed name: C1 %+v, C2 %+v; want C1's stale mark to match C2's claim and C2's to find nothing\n%s", a, b, h2.log())
			}
			if !fixed && (a.Lost != 1 || b.Sent != 1) {
				t.Fatalf("per claim: C1 %+v, C2 %+v; want C1's stale mark to affect 0 rows and C2's to mark SENT\n%s", a, b, h1.log())
			}
			if fixed && !strings.Contains(h2.log(), "→ 0 rows affected: no longer SENDING under token worker-C") {
				t.Errorf("C2's log does not say why its mark found nothing:\n%s", h2.log())
			}
			if !fixed && !strings.Contains(h1.log(), "→ 0 rows affected: the claim changed hands") {
				t.Errorf("C1's log does not say its claim changed hands:\n%s", h1.log())
			}
			if st, att, _ := f.status(t, ev); st != "SENT" || att != 2 {
				t.Fatalf("status %s after %d attempts, want SENT after 2", st, att)
			}
		})
	}
}

func TestUnsafeClaimThatMatchedNothingSaysItNeverHeldAClaimNotThatALeaseExpired(t *testing.T) {
	f := setup(t)
	f.insert(t, 41)
	hold := newHold(relay.PointClaimLocked)
	a := f.relay(t, relay.Config{Name: "relay-A", UnsafeClaim: true, Once: true}, nil, hold)
	done := make(chan error, 1)
	go func() { done <- a.Run(context.Background()) }()
	<-hold.reached // A has read the row, and nothing is locked
	b := f.relay(t, relay.Config{Name: "relay-B", UnsafeClaim: true, Once: true}, nil, nil)
	if err := b.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if c := a.Counts(); c.Unclaimed != 1 || c.Lost != 0 || c.Claimed != 0 || c.Published != 1 {
		t.Fatalf("relay A %+v, want one event published without a claim\n%s", c, hold.log())
	}
	log := hold.log()
	if !strings.Contains(log, "→ 0 rows affected: this relay never claimed it") || strings.Contains(log, "lease expired") ||
		strings.Contains(log, "changed hands") || strings.Contains(log, "claimed order-41-created-v1 with lease token") {
		t.Errorf("A's log does not tell what happened:\n%s", log)
	}
	if n := f.ready(t); n != 2 {
		t.Fatalf("the broker holds %d copies, want 2", n)
	}
}

func TestLeaseScanResetsAtMostItsLimitOldestFirstAndMarksDeadPastMaxAttempts(t *testing.T) {
	f := setup(t)
	f.insert(t, 51, 52, 53)
	// Claims of relays that died: all expired, order 53's the oldest and on
	// its last attempt.
	for _, c := range []struct {
		id      int
		attempt int
		ago     int
	}{{51, 1, 2}, {52, 1, 1}, {53, 2, 3}} {
		if _, err := f.db.Exec(`UPDATE outbox_event SET status='SENDING',lease_token='gone',attempts=?,
			locked_until=DATE_SUB(NOW(6),INTERVAL ? SECOND) WHERE aggregate_id=?`, c.attempt, c.ago, c.id); err != nil {
			t.Fatal(err)
		}
	}
	h := &logHooks{}
	r := f.relay(t, relay.Config{Name: "relay-S", SkipLocked: true, ScanLimit: 2, MaxAttempts: 2, ScanDelay: 300}, nil, h)
	if n, err := r.Scan(context.Background()); err != nil || n != 2 {
		t.Fatalf("first scan reset %d (%v), want its limit, 2", n, err)
	}
	for id, want := range map[string]string{"order-53-created-v1": "DEAD", "order-51-created-v1": "NEW", "order-52-created-v1": "SENDING"} {
		if st, _, _ := f.status(t, id); st != want {
			t.Errorf("after the first scan %s is %s, want %s (oldest lease first)", id, st, want)
		}
	}
	if n, err := r.Scan(context.Background()); err != nil || n != 1 {
		t.Fatalf("second scan reset %d (%v), want the one left", n, err)
	}
	if st, att, le := f.status(t, "order-53-created-v1"); st != "DEAD" || att != 2 || le != "lease expired" {
		t.Fatalf("order 53: %s after %d attempts, last_error %q; want DEAD, lease expired", st, att, le)
	}
	if st, _, le := f.status(t, "order-52-created-v1"); st != "NEW" || le != "lease expired" {
		t.Fatalf("order 52: %s, last_error %q", st, le)
	}
	if !strings.Contains(h.log(), "LIMIT 2 → 2 rows affected") {
		t.Errorf("the scan's log does not show its limit:\n%s", h.log())
	}
}

package consumer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/services"
)

// These tests run `lab worker consumer` as a separate process and SIGKILL it
// at a named point, the way lessons do.

func oneMessage(strategy, ev string) []string {
	return []string{"--strategy", strategy, "--event", ev, "--key", "order:42:paid", "--user", "7", "--amount", "10"}
}

func TestMarkFirstKilledBetweenItsCommitsLosesThePoints(t *testing.T) {
	db := resetDB(t)
	c1 := spawn(t, "c1", []string{"after-mark-commit"}, oneMessage("mark-first", "event-001")...)
	waitPaused(t, c1, "after-mark-commit")
	if err := c1.Kill(); err != nil {
		t.Fatal(err)
	}
	c2 := spawn(t, "c2", nil, oneMessage("mark-first", "event-001")...)
	if code := waitExit(t, c2); code != 0 || !strings.Contains(output(c2), "duplicate absorbed") {
		t.Fatalf("redelivery: exit %d\n%s", code, output(c2))
	}
	if p := points(t, db, 7); p != 0 {
		t.Fatalf("points %d, want 0 (mark without effect)", p)
	}
}

func TestPointsFirstKilledBetweenItsCommitsAwardsTwice(t *testing.T) {
	db := resetDB(t)
	c1 := spawn(t, "c1", []string{"after-points-commit"}, oneMessage("points-first", "event-001")...)
	waitPaused(t, c1, "after-points-commit")
	c1.Kill()
	c2 := spawn(t, "c2", nil, oneMessage("points-first", "event-001")...)
	if code := waitExit(t, c2); code != 0 {
		t.Fatalf("redelivery: exit %d\n%s", code, output(c2))
	}
	if p := points(t, db, 7); p != 20 {
		t.Fatalf("points %d, want 20", p)
	}
}

func TestOneTxKilledBeforeCommitLeavesNothingAndTheRetryAppliesOnce(t *testing.T) {
	db := resetDB(t)
	c1 := spawn(t, "c1", []string{"before-commit"}, oneMessage("one-tx", "event-001")...)
	waitPaused(t, c1, "before-commit")
	c1.Kill()
	if n := count(t, db, "SELECT COUNT(*) FROM consumed_operation"); n != 0 {
		t.Fatalf("%d marks visible after the kill", n)
	}
	c2 := spawn(t, "c2", []string{"after-commit"}, oneMessage("one-tx", "event-001")...)
	waitPaused(t, c2, "after-commit")
	c2.Kill()
	c3 := spawn(t, "c3", nil, oneMessage("one-tx", "event-001")...)
	if code := waitExit(t, c3); code != 0 || !strings.Contains(output(c3), "duplicate absorbed") {
		t.Fatalf("exit %d\n%s", code, output(c3))
	}
	if p := points(t, db, 7); p != 10 {
		t.Fatalf("points %d, want 10", p)
	}
}

func TestAConflictMakesTheProcessExitNonZero(t *testing.T) {
	resetDB(t, "idempotency/conflict.sql")
	waitExit(t, spawn(t, "c1", nil, oneMessage("one-tx", "event-001")...))
	c2 := spawn(t, "c2", nil, "--strategy", "one-tx", "--event", "event-002", "--key", "order:42:paid", "--user", "8", "--amount", "10")
	if code := waitExit(t, c2); code == 0 || !strings.Contains(output(c2), "conflict:") {
		t.Fatalf("exit %d\n%s", code, output(c2))
	}
}

func TestDBThenRedisKilledBeforeTheSetAwardsTwice(t *testing.T) {
	db := resetDB(t)
	redisClient(t)
	c1 := spawn(t, "c1", []string{"after-commit"}, oneMessage("db-then-redis", "event-001")...)
	waitPaused(t, c1, "after-commit")
	c1.Kill()
	waitExit(t, spawn(t, "c2", nil, oneMessage("db-then-redis", "event-001")...))
	if p := points(t, db, 7); p != 20 {
		t.Fatalf("points %d, want 20", p)
	}
}

// queue is a fresh queue for one test, deleted afterwards.
func queue(t *testing.T) (article string, ch *amqp.Channel) {
	t.Helper()
	c := cfg(t)
	conn, err := services.DialAMQP(context.Background(), c.AMQP)
	if err != nil {
		t.Fatalf("RabbitMQ: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err = conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	article = fmt.Sprintf("points%d", rand.IntN(1e9))
	name := testEnv(t).Queue(article)
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.QueueDelete(name, false, false, false) })
	return article, ch
}

func publish(t *testing.T, ch *amqp.Channel, article string, msgID string, body map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	err := ch.PublishWithContext(context.Background(), "", services.Names{NS: nsOf(t)}.Name(article), false, false,
		amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, MessageId: msgID, Body: b})
	if err != nil {
		t.Fatal(err)
	}
}

// readyBecomes polls the queue's ready count until it is want. Acks are
// processed asynchronously, so the count is given time to settle; a
// wrong outcome stays wrong and fails after the (generous) deadline.
func readyBecomes(t *testing.T, ch *amqp.Channel, article string, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		q, err := ch.QueueDeclarePassive(services.Names{NS: nsOf(t)}.Name(article), true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if q.Messages == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d messages ready in the queue, want %d", q.Messages, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func payment(ev string) map[string]any {
	return map[string]any{"event_id": ev, "business_key": "order:42:paid", "user_id": 7, "amount": 10}
}

func TestQueueModeKilledAfterCommitBeforeAckGetsARedeliveryItAbsorbs(t *testing.T) {
	db := resetDB(t)
	q, ch := queue(t)
	publish(t, ch, q, "", payment("event-001"))
	c1 := spawn(t, "c1", []string{"before-ack"}, "--strategy", "one-tx", "--queue", q)
	waitPaused(t, c1, "before-ack")
	c1.Kill()
	c2 := spawn(t, "c2", nil, "--strategy", "one-tx", "--queue", q, "--count", "1")
	if code := waitExit(t, c2); code != 0 {
		t.Fatalf("exit %d\n%s", code, output(c2))
	}
	out := output(c2)
	if !strings.Contains(out, "redelivered=true") || !strings.Contains(out, "duplicate absorbed") || !strings.Contains(out, "acked tag=1") {
		t.Fatalf("redelivery not absorbed and acked:\n%s", out)
	}
	if p := points(t, db, 7); p != 10 {
		t.Fatalf("points %d, want 10", p)
	}
	readyBecomes(t, ch, q, 0)
}

func TestQueueModeAckBeforeCommitKilledLosesTheEffect(t *testing.T) {
	db := resetDB(t)
	q, ch := queue(t)
	publish(t, ch, q, "", payment("event-001"))
	c1 := spawn(t, "c1", []string{"after-ack"}, "--strategy", "one-tx", "--queue", q, "--ack", "before-commit")
	waitPaused(t, c1, "after-ack")
	c1.Kill()
	readyBecomes(t, ch, q, 0) // the early ack removed it
	if p := points(t, db, 7); p != 0 {
		t.Fatalf("points %d, want 0", p)
	}
}

func TestQueueModeTakesTheEventIDFromTheMessageIDProperty(t *testing.T) {
	db := resetDB(t)
	q, ch := queue(t)
	body := payment("")
	delete(body, "event_id")
	publish(t, ch, q, "event-007", body)
	publish(t, ch, q, "", map[string]any{"business_key": "order:43:paid"})
	c := spawn(t, "c", nil, "--strategy", "one-tx", "--queue", q, "--count", "2")
	if code := waitExit(t, c); code != 0 {
		t.Fatalf("exit %d\n%s", code, output(c))
	}
	if n := count(t, db, "SELECT COUNT(*) FROM consumed_operation WHERE event_id='event-007'"); n != 1 {
		t.Fatalf("mark with event-007: %d\n%s", n, output(c))
	}
	if !strings.Contains(output(c), "rejected without requeue") {
		t.Fatalf("the malformed message was not rejected:\n%s", output(c))
	}
}

func TestQueueModeRejectsAConflictWithoutAckingIt(t *testing.T) {
	db := resetDB(t, "idempotency/conflict.sql")
	q, ch := queue(t)
	publish(t, ch, q, "", payment("event-001"))
	other := payment("event-002")
	other["amount"] = 99
	publish(t, ch, q, "", other)
	c := spawn(t, "c", nil, "--strategy", "one-tx", "--queue", q, "--count", "2")
	if code := waitExit(t, c); code != 0 {
		t.Fatalf("exit %d\n%s", code, output(c))
	}
	if !strings.Contains(output(c), "rejected tag=2 without requeue") {
		t.Fatalf("%s", output(c))
	}
	if n := count(t, db, "SELECT COUNT(*) FROM consumed_conflict"); n != 1 {
		t.Fatalf("%d conflicts", n)
	}
}

func TestQueueModeFailsClearlyWhenTheQueueIsMissing(t *testing.T) {
	resetDB(t)
	c := spawn(t, "c", nil, "--strategy", "one-tx", "--queue", "no-such-queue")
	if code := waitExit(t, c); code == 0 || !strings.Contains(output(c), "queue no-such-queue_"+nsOf(t)+" does not exist") {
		t.Fatalf("exit %d\n%s", code, output(c))
	}
}

func TestQueueModeAppliesTheOutboxPayloadByVersion(t *testing.T) {
	db := resetDB(t)
	orderView(t, db, "'versioned',42")
	q, ch := queue(t)
	// What the relay sends: the outbox payload as the body, the event id as
	// the message id. Paid arrives before created.
	publish(t, ch, q, "order-42-paid-v2", map[string]any{"orderId": 42, "version": 2, "status": "PAID"})
	publish(t, ch, q, "order-42-created-v1", map[string]any{"orderId": 42, "version": 1, "status": "CREATED"})
	publish(t, ch, q, "order-42-broken", map[string]any{"orderId": 42, "version": 3})
	c := spawn(t, "c", nil, "--strategy", "newer-version", "--effect", "order-view", "--consumer", "versioned", "--queue", q, "--count", "3")
	if code := waitExit(t, c); code != 0 {
		t.Fatalf("exit %d\n%s", code, output(c))
	}
	out := output(c)
	for _, want := range []string{
		"delivery tag=1 redelivered=false order-42-paid-v2 order 42 version 2 status PAID",
		"stale version 1 ignored (view holds 2)",
		"acked tag=2",
		"no status in the body",
		"rejected without requeue",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("%q missing from the output:\n%s", want, out)
		}
	}
	if v := viewOf(t, db, "versioned", 42); v != "PAID 2" {
		t.Fatalf("view %q, want PAID 2", v)
	}
	readyBecomes(t, ch, q, 0)
}

func TestQueueModeWithoutIdempotencyAppliesBothCopies(t *testing.T) {
	db := resetDB(t)
	q, ch := queue(t)
	body := map[string]any{"orderId": 42, "version": 2, "business_key": "order:42:paid", "user_id": 7, "amount": 10}
	publish(t, ch, q, "order-42-paid-v2", body)
	publish(t, ch, q, "order-42-paid-v2", body)
	c := spawn(t, "c", nil, "--strategy", "none", "--queue", q, "--count", "2")
	if code := waitExit(t, c); code != 0 {
		t.Fatalf("exit %d\n%s", code, output(c))
	}
	if n := strings.Count(output(c), "applied: +10 points to user 7"); n != 2 {
		t.Fatalf("%d awards logged, want 2:\n%s", n, output(c))
	}
	if p := points(t, db, 7); p != 20 {
		t.Fatalf("points %d, want 20", p)
	}
	readyBecomes(t, ch, q, 0)
}

// One consumer process with two handlers finishes its deliveries in
// whatever order they run: a slow "created" overtaken by "paid" writes the
// view last, as two instances on one queue do. With one handler the queue's
// order holds.
func TestConcurrentHandlersFinishOutOfQueueOrder(t *testing.T) {
	for _, c := range []struct {
		handlers string
		want     string
	}{{"2", "CREATED 1"}, {"1", "PAID 2"}} {
		t.Run(c.handlers+" handlers", func(t *testing.T) {
			db := resetDB(t)
			orderView(t, db, "'overwrite',44")
			q, ch := queue(t)
			publish(t, ch, q, "order-44-v1", map[string]any{"orderId": 44, "version": 1, "status": "CREATED"})
			publish(t, ch, q, "order-44-v2", map[string]any{"orderId": 44, "version": 2, "status": "PAID"})
			p := spawn(t, "c", nil, "--strategy", "none", "--effect", "order-view", "--consumer", "overwrite", "--queue", q,
				"--count", "2", "--concurrency", c.handlers, "--slow", "order-44-v1=700ms")
			if code := waitExit(t, p); code != 0 {
				t.Fatalf("exit %d\n%s", code, output(p))
			}
			if v := viewOf(t, db, "overwrite", 44); v != c.want {
				t.Fatalf("view %q, want %s\n%s", v, c.want, output(p))
			}
			readyBecomes(t, ch, q, 0)
		})
	}
}

// A consumer that stops after --count takes nothing more: it cancels before
// settling its last delivery, so the broker pushes the next message to no
// one about to leave. Pushed and requeued, that message would come back
// marked redelivered and, on a single-active-consumer queue, behind the
// messages the next consumer was given meanwhile (lesson 10's order).
func TestAConsumerStoppingAtItsCountIsPushedNothingMore(t *testing.T) {
	resetDB(t)
	q, ch := queue(t)
	body := map[string]any{"orderId": 42, "version": 2, "business_key": "order:42:paid", "user_id": 7, "amount": 10}
	for _, id := range []string{"m1", "m2", "m3"} {
		publish(t, ch, q, id, body)
	}
	c := spawn(t, "c", nil, "--strategy", "none", "--queue", q, "--count", "1")
	if code := waitExit(t, c); code != 0 {
		t.Fatalf("exit %d\n%s", code, output(c))
	}
	readyBecomes(t, ch, q, 2)
	for _, want := range []string{"m2", "m3"} {
		d, ok, err := ch.Get(services.Names{NS: nsOf(t)}.Name(q), true)
		if err != nil || !ok {
			t.Fatalf("basic.get: ok %v, %v", ok, err)
		}
		if d.MessageId != want || d.Redelivered {
			t.Fatalf("next message %s redelivered=%v, want %s never delivered before (the consumer took more than its count)\n%s",
				d.MessageId, d.Redelivered, want, output(c))
		}
	}
}

package consumer_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/programs/consumer"
)

func TestOneTxAppliesOnceAndAbsorbsTheSameOperationUnderANewMessageID(t *testing.T) {
	db := resetDB(t)
	c, _ := newConsumer(t, consumer.OneTx, "points-award", consumer.EffectPoints)
	if r := handle(t, c, msg("event-001", "order:42:paid", 7, 10)); r.Outcome != consumer.Applied {
		t.Fatalf("first delivery: %+v", r)
	}
	if r := handle(t, c, msg("event-002", "order:42:paid", 7, 10)); r.Outcome != consumer.Absorbed {
		t.Fatalf("re-wrapped duplicate: %+v", r)
	}
	if p := points(t, db, 7); p != 10 {
		t.Fatalf("points %d, want 10", p)
	}
}

func TestOneTxRecordsAConflictWhenTheSameKeyCarriesAnotherPayload(t *testing.T) {
	db := resetDB(t, "idempotency/conflict.sql")
	c, _ := newConsumer(t, consumer.OneTx, "points-award", consumer.EffectPoints)
	handle(t, c, msg("event-001", "order:42:paid", 7, 10))
	r := handle(t, c, msg("event-003", "order:42:paid", 7, 15))
	if r.Outcome != consumer.Conflict || !strings.Contains(r.Detail, "stored event-001 user 7 amount 10") {
		t.Fatalf("different amount: %+v", r)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM consumed_conflict WHERE business_key='order:42:paid' AND amount=15 AND stored_amount=10"); n != 1 {
		t.Fatalf("%d conflict rows, want 1", n)
	}
	if p := points(t, db, 7); p != 10 {
		t.Fatalf("points %d, want 10", p)
	}
}

func TestConflictTableIsCreatedWhenTheLessonDidNot(t *testing.T) {
	db := resetDB(t)
	c, _ := newConsumer(t, consumer.OneTx, "points-award", consumer.EffectPoints)
	handle(t, c, msg("event-001", "order:42:paid", 7, 10))
	if r := handle(t, c, msg("event-003", "order:42:paid", 8, 10)); r.Outcome != consumer.Conflict {
		t.Fatalf("different user: %+v", r)
	}
	handle(t, c, msg("event-003", "order:42:paid", 8, 10))
	if n := count(t, db, "SELECT seen FROM consumed_conflict WHERE event_id='event-003'"); n != 2 {
		t.Fatalf("seen %d, want 2 (one row per conflicting event, counted)", n)
	}
}

func TestBlindKeyTakesAnotherPayloadForADuplicateSilently(t *testing.T) {
	db := resetDB(t, "idempotency/conflict.sql")
	c, _ := newConsumer(t, consumer.BlindKey, "points-award", consumer.EffectPoints)
	handle(t, c, msg("event-001", "order:42:paid", 7, 10))
	if r := handle(t, c, msg("event-003", "order:42:paid", 7, 15)); r.Outcome != consumer.Absorbed {
		t.Fatalf("blind-key: %+v", r)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM consumed_conflict"); n != 0 {
		t.Fatalf("blind-key recorded %d conflicts", n)
	}
}

func TestMessageIDDedupAwardsARewrappedEventTwice(t *testing.T) {
	db := resetDB(t)
	c, _ := newConsumer(t, consumer.MessageID, "points-award", consumer.EffectPoints)
	handle(t, c, msg("event-001", "order:42:paid", 7, 10))
	if r := handle(t, c, msg("event-001", "order:42:paid", 7, 10)); r.Outcome != consumer.Absorbed {
		t.Fatalf("same message id again: %+v", r)
	}
	if r := handle(t, c, msg("event-002", "order:42:paid", 7, 10)); r.Outcome != consumer.Applied {
		t.Fatalf("new message id: %+v", r)
	}
	if p := points(t, db, 7); p != 20 {
		t.Fatalf("points %d, want 20", p)
	}
}

func TestOneTxRollsBackTheMarkWhenTheAccountIsMissing(t *testing.T) {
	db := resetDB(t)
	c, _ := newConsumer(t, consumer.OneTx, "points-award", consumer.EffectPoints)
	_, err := c.Handle(context.Background(), msg("event-003", "order:43:paid", 8, 10), nil)
	if !errors.Is(err, consumer.ErrNoAccount) {
		t.Fatalf("err %v, want ErrNoAccount", err)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM consumed_operation"); n != 0 {
		t.Fatalf("%d marks left behind", n)
	}
	if _, err := db.Exec("INSERT INTO points_account VALUES(8,0)"); err != nil {
		t.Fatal(err)
	}
	if r := handle(t, c, msg("event-003", "order:43:paid", 8, 10)); r.Outcome != consumer.Applied {
		t.Fatalf("retry: %+v", r)
	}
}

func TestPointsAndSMSConsumersKeepSeparateMarksForOneEvent(t *testing.T) {
	db := resetDB(t, "idempotency/sms_task.sql")
	pts, _ := newConsumer(t, consumer.OneTx, "points-award", consumer.EffectPoints)
	sms, _ := newConsumer(t, consumer.OneTx, "sms-notify", consumer.EffectSMSTask)
	for _, c := range []*consumer.Consumer{pts, sms, pts, sms} {
		handle(t, c, msg("event-001", "order:42:paid", 7, 10))
	}
	if n := count(t, db, "SELECT COUNT(*) FROM consumed_operation WHERE business_key='order:42:paid'"); n != 2 {
		t.Fatalf("%d marks, want one per consumer", n)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM sms_task"); n != 1 {
		t.Fatalf("%d SMS tasks, want 1", n)
	}
	if p := points(t, db, 7); p != 10 {
		t.Fatalf("points %d", p)
	}
	// One global mark (the SMS consumer under the points consumer's name)
	// turns the SMS away.
	shared, _ := newConsumer(t, consumer.OneTx, "points-award", consumer.EffectSMSTask)
	if r := handle(t, shared, msg("event-002", "order:43:paid", 7, 10)); r.Outcome != consumer.Applied {
		t.Fatalf("%+v", r)
	}
	if r := handle(t, pts, msg("event-002", "order:43:paid", 7, 10)); r.Outcome != consumer.Absorbed {
		t.Fatalf("a shared mark should turn the points consumer away: %+v", r)
	}
}

func TestRedisFirstTurnsTheRetryAwayAfterTheTransactionFailed(t *testing.T) {
	db := resetDB(t)
	rc := redisClient(t)
	c, _ := newConsumer(t, consumer.RedisFirst, "points-award", consumer.EffectPoints)
	c.Redis = rc
	if _, err := c.Handle(context.Background(), msg("event-003", "order:43:paid", 8, 10), nil); !errors.Is(err, consumer.ErrNoAccount) {
		t.Fatalf("err %v", err)
	}
	if _, err := db.Exec("INSERT INTO points_account VALUES(8,0)"); err != nil {
		t.Fatal(err)
	}
	if r := handle(t, c, msg("event-003", "order:43:paid", 8, 10)); r.Outcome != consumer.Absorbed {
		t.Fatalf("retry: %+v", r)
	}
	if p := points(t, db, 8); p != 0 {
		t.Fatalf("points %d: the effect should be lost", p)
	}
	if v, _ := rc.Get(context.Background(), consumer.RedisKey(nsOf(t), "points-award", "order:43:paid")).Result(); v != "event-003" {
		t.Fatalf("Redis mark %q", v)
	}
}

func TestAnExpiredRedisMarkLetsAReplayThroughUnlessTheDatabaseDecides(t *testing.T) {
	db := resetDB(t)
	rc := redisClient(t)
	for _, s := range []consumer.Strategy{consumer.DBThenRedis, consumer.RedisFilter} {
		c, _ := newConsumer(t, s, "points-award", consumer.EffectPoints)
		c.Redis, c.TTL = rc, time.Second
		key := "order:" + string(s) + ":paid"
		handle(t, c, msg("event-1", key, 7, 10))
		if r := handle(t, c, msg("event-1", key, 7, 10)); r.Outcome != consumer.Absorbed {
			t.Fatalf("%s within the TTL: %+v", s, r)
		}
		time.Sleep(1500 * time.Millisecond)
		r := handle(t, c, msg("event-1", key, 7, 10))
		want := map[consumer.Strategy]consumer.Outcome{consumer.DBThenRedis: consumer.Applied, consumer.RedisFilter: consumer.Absorbed}[s]
		if r.Outcome != want {
			t.Fatalf("%s after the TTL: %+v, want %s", s, r, want)
		}
	}
	if p := points(t, db, 7); p != 30 {
		t.Fatalf("points %d, want 20 (db-then-redis twice) + 10 (redis-filter once)", p)
	}
}

func TestParseArgsRejectsWhatTheContractDoesNotAllow(t *testing.T) {
	for _, args := range [][]string{
		{"--event", "e", "--key", "k", "--user", "7"},
		{"--strategy", "first-wins", "--event", "e", "--key", "k", "--user", "7"},
		{"--strategy", "one-tx"},
		{"--strategy", "one-tx", "--queue", "q", "--ack", "never"},
	} {
		if _, err := consumer.ParseArgs(args); err == nil {
			t.Errorf("%v parsed", args)
		}
	}
	o, err := consumer.ParseArgs([]string{"--strategy", "one-tx", "--queue", "orders", "--count", "2"})
	if err != nil || o.Ack != "after-commit" || o.Prefetch != 1 || o.Consumer != "points-award" || o.DB != "blog_idempotency_lab" {
		t.Fatalf("defaults: %+v %v", o, err)
	}
}

func TestNoneStrategyAppliesEveryCopy(t *testing.T) {
	db := resetDB(t)
	c, _ := newConsumer(t, consumer.None, "points-award", consumer.EffectPoints)
	for i := 0; i < 2; i++ {
		if r := handle(t, c, msg("order-42-paid-v2", "order:42:paid", 7, 10)); r.Outcome != consumer.Applied {
			t.Fatalf("copy %d: %+v", i+1, r)
		}
	}
	if p := points(t, db, 7); p != 20 {
		t.Fatalf("points %d, want 20 (two copies, two awards)", p)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM consumed_operation"); n != 0 {
		t.Fatalf("none wrote %d marks", n)
	}
}

func TestParseArgsPairsOrderViewWithItsStrategies(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "newer-version", "--queue", "q"}, "add --effect order-view"},
		{[]string{"--strategy", "one-tx", "--effect", "order-view", "--queue", "q"}, "no business key to mark"},
		{[]string{"--strategy", "none", "--effect", "order-view", "--event", "e", "--order", "42", "--version", "2"}, "--status missing"},
		{[]string{"--strategy", "none", "--effect", "order-views", "--queue", "q"}, "use points, sms-task or order-view"},
	} {
		if _, err := consumer.ParseArgs(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
		}
	}
	o, err := consumer.ParseArgs([]string{"--strategy", "newer-version", "--effect", "order-view", "--consumer", "versioned",
		"--event", "order-42-paid-v2", "--order", "42", "--version", "2", "--status", "PAID"})
	if err != nil || o.Msg.OrderID != 42 || o.Msg.Version != 2 || o.Msg.Status != "PAID" {
		t.Fatalf("%+v %v", o, err)
	}
	if _, err := consumer.ParseArgs([]string{"--strategy", "none", "--queue", "orders.naive", "--count", "2"}); err != nil {
		t.Fatalf("none with points: %v", err)
	}
}

func TestParseArgsReadsRetriesConcurrencyAndSlowEvents(t *testing.T) {
	o, err := consumer.ParseArgs([]string{"--strategy", "one-tx", "--queue", "q", "--concurrency", "3", "--slow", "a=1s,b=250ms"})
	if err != nil || o.Concurrency != 3 || o.Prefetch != 3 || o.Slow["a"] != time.Second || o.Slow["b"] != 250*time.Millisecond {
		t.Fatalf("%+v, %v", o, err)
	}
	for _, bad := range [][]string{
		{"--strategy", "one-tx", "--queue", "q", "--slow", "a"},
		{"--strategy", "one-tx", "--queue", "q", "--concurrency", "0"},
		{"--strategy", "one-tx", "--event", "e", "--key", "k", "--user", "7", "--amount", "1", "--concurrency", "2"},
		{"--strategy", "one-tx", "--queue", "q", "--max-retries", "3"},
		{"--strategy", "one-tx", "--queue", "q", "--park-queue", "p"},
		{"--strategy", "one-tx", "--queue", "q", "--on-failure", "drop"},
		{"--strategy", "one-tx", "--event", "e", "--key", "k", "--user", "7", "--amount", "1", "--fail", "e"},
	} {
		if _, err := consumer.ParseArgs(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func TestAttemptsAreTheBrokersOwnCount(t *testing.T) {
	death := func(q, reason string, n int64) amqp.Table {
		return amqp.Table{"queue": q, "reason": reason, "count": n}
	}
	for _, c := range []struct {
		h    amqp.Table
		want int64
	}{
		{nil, 0},
		{amqp.Table{"x-delivery-count": int64(2)}, 2},
		{amqp.Table{"x-death": []any{death("orders.wait", "expired", 3), death("orders", "rejected", 3)}}, 3},
		{amqp.Table{"x-death": []any{death("other", "rejected", 5)}}, 0}, // rejected from another queue
		{amqp.Table{"x-delivery-count": int64(1), "x-death": []any{death("orders", "rejected", 4)}}, 4},
	} {
		if got := consumer.Attempts(amqp.Delivery{Headers: c.h}, "orders"); got != c.want {
			t.Errorf("%v: %d attempts, want %d", c.h, got, c.want)
		}
	}
}

package steps_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rmlab/lab/steps"
)

// `not` inverts only an expectation that was evaluated: one that cannot be
// (a fact the step does not report, a verb on a step kind that does not
// carry what it reads, a queue that does not exist) fails with or without
// it; each of these used to pass.
func TestNotInvertsOnlyWhatCouldBeEvaluated(t *testing.T) {
	r := newRun(t)
	ctx := context.Background()
	must(t, r, step("reset", "db=blog_idempotency_lab", ""))
	must(t, r, step("sql", "", "SELECT 1;"))
	for _, line := range []string{"not fact lsot 0", "not confirm ack", "not unavailable no-such-queue", "not ready no-such-queue 1"} {
		res := r.Step(ctx, step("expect", "", line))
		if res.Passed || !strings.Contains(res.Why, "cannot be checked") {
			t.Errorf("%q passed or failed for another reason: %+v", line, res)
		}
	}
	// What was evaluated is still inverted.
	must(t, r, step("expect", "", "not contains no-such-text\nnot rows 5"))
	res := r.Step(ctx, step("expect", "", "not rows 1"))
	if res.Passed {
		t.Fatalf("not rows 1 passed on one row: %+v", res)
	}
}

// lab check refuses a malformed or misspelt argument before anything runs.
func TestExpectArgumentsAreCheckedAtLoad(t *testing.T) {
	k, _ := steps.Lookup("expect")
	for _, line := range []string{"not header x-delivry-count", "header x-death.countt 1", "header $x 1", "not ready orders one", "confirm acked", "elapsed > 1s", "ok 1", "rows many"} {
		if err := k.Check(step("expect", "", line)); err == nil {
			t.Errorf("%q loaded", line)
		}
	}
	// The application's own headers (the redrive's x-redriven) too.
	for _, line := range []string{"not header x-delivery-count", "header x-redriven 1", "header tenant acme", "ready orders 1", "ready 1", "confirm ack", "elapsed >= 1s", "ok", "rows 2", "fact lost 0"} {
		if err := k.Check(step("expect", "", line)); err != nil {
			t.Errorf("%q refused: %v", line, err)
		}
	}
}

// A verb on a step whose outcome does not carry what it reads cannot be
// checked, with or without not: after a publish, "affected 0", "elapsed <
// 1ms", "not waiting" and "rows 0" read zero values and all used to pass.
func TestAVerbOnAStepThatDoesNotFillWhatItReadsFails(t *testing.T) {
	r := amqpRun(t)
	ctx := context.Background()
	must(t, r, step("publish", "channel=pub exchange=orders key=order.paid confirm id=event-001", body))
	for _, line := range []string{"affected 0", "not affected 1", "elapsed < 1h", "not waiting", "rows 0", "not rows 3", "value x", "fact exit 0", "delivered 0"} {
		res := r.Step(ctx, step("expect", "", line))
		if res.Passed || !strings.Contains(res.Why, "cannot be checked") || !strings.Contains(res.Why, "publish") {
			t.Errorf("%q after a publish: passed or failed for another reason: %+v", line, res)
		}
	}
	// What a publish does carry still holds.
	must(t, r, step("expect", "", "confirm ack\nfact id event-001\nready orders 1"))
}

// contains after a publish searches what the step showed, not the constant
// "Query OK, 0 rows affected" it used to: a publish the broker returned with
// 312 NO_ROUTE says so, and "not contains NO_ROUTE" fails on it.
func TestContainsAfterAPublishSearchesWhatThePublishShowed(t *testing.T) {
	r := amqpRun(t)
	ctx := context.Background()
	must(t, r, step("publish", "channel=pub exchange=orders key=order.refunded confirm mandatory id=event-001", body))
	must(t, r, step("expect", "", "contains NO_ROUTE\nnot contains Query OK"))
	if res := r.Step(ctx, step("expect", "", "not contains NO_ROUTE")); res.Passed {
		t.Fatalf("not contains NO_ROUTE passed after a returned publish: %+v", res)
	}
}

// The table lab check and expect share: every verb on every kind either
// fits or names what it reads and what would fit instead.
func TestEveryVerbOnEveryKindFitsOrSaysWhatWould(t *testing.T) {
	misfits := 0
	for _, kind := range []string{"sql", "redis", "spawn", "wait", "publish", "declare", "consume", "ack", "close", "queues", "proxy", "broker-restart", "chaos", "http"} {
		for _, verb := range steps.VerbNames() {
			err := steps.Fits(verb, "", kind)
			if err == nil {
				continue
			}
			misfits++
			if !strings.Contains(err.Error(), "after "+kind+", check ") && !strings.Contains(err.Error(), "its facts are") && !strings.Contains(err.Error(), "QUEUE N") {
				t.Errorf("%s on %s: %v (no fix named)", verb, kind, err)
			}
		}
	}
	for _, c := range []struct{ verb, arg, kind string }{{"affected", "0", "publish"}, {"waiting", "", "wait"}, {"rows", "0", "declare"},
		{"contains", "x", "sql"}, {"ok", "", "sql"}, {"confirm", "ack", "publish"}, {"header", "x-death.count", "consume"}} {
		err := steps.Fits(c.verb, c.arg, c.kind)
		if want := c.kind == "sql" || c.verb == "confirm" || c.verb == "header"; (err == nil) != want {
			t.Errorf("%s %s on %s: %v", c.verb, c.arg, c.kind, err)
		}
	}
	if misfits == 0 {
		t.Fatal("no verb misfits any kind")
	}
}

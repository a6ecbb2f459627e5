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
	for _, line := range []string{"not header x-delivry-count", "not ready orders one", "confirm acked", "elapsed > 1s", "ok 1", "rows many"} {
		if err := k.Check(step("expect", "", line)); err == nil {
			t.Errorf("%q loaded", line)
		}
	}
	for _, line := range []string{"not header x-delivery-count", "ready orders 1", "ready 1", "confirm ack", "elapsed >= 1s", "ok", "rows 2", "fact lost 0"} {
		if err := k.Check(step("expect", "", line)); err != nil {
			t.Errorf("%q refused: %v", line, err)
		}
	}
}

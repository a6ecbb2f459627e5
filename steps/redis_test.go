package steps_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rmlab/lab/steps"
)

// A command Redis refuses fails the step unless error= names it, and every
// command's reply is kept (a row each), not only the last one's.
func TestARedisCommandTheServerRefusesFailsTheStepUnlessErrorNamesIt(t *testing.T) {
	r := newRun(t)
	ctx := context.Background()
	res := r.Step(ctx, step("redis", "", "SET lab:t x\nLPUSH lab:t y\nSET lab:u z"))
	if res.Passed || !strings.Contains(res.Why, "WRONGTYPE") {
		t.Fatalf("a refused LPUSH passed: %+v", res)
	}
	if len(res.Sent) != 2 {
		t.Fatalf("the command after the refused one was sent: %v", res.Sent)
	}
	must(t, r, step("redis", "error=WRONGTYPE", "SET lab:t x\nLPUSH lab:t y"))
	must(t, r, step("expect", "", "row OK\nrow (error) WRONGTYPE Operation against a key holding the wrong kind of value"))
	res = r.Step(ctx, step("redis", "error=WRONGTYPE", "SET lab:t x"))
	if res.Passed {
		t.Fatalf("error=WRONGTYPE passed a step Redis took whole: %+v", res)
	}
	k, _ := steps.Lookup("redis")
	if err := k.Check(step("redis", "error=wrongtype", "GET lab:t")); err == nil {
		t.Error("error=wrongtype (not as Redis writes it) loaded")
	}
}

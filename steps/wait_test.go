package steps_test

import (
	"context"
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/steps"
)

// `wait until=exit` fails on a worker that ended with another code than
// the lesson says (0 unless exit=N): a worker dying on a bad flag used to
// pass.
func TestWaitUntilExitFailsOnAnExitCodeTheLessonDidNotName(t *testing.T) {
	env := labtest.Connect(t)
	l := &lab.Lesson{ID: "t"}
	r := steps.NewRun(&steps.Env{Svc: env.Svc, Binary: labtest.Lab(t), Replay: true}, l, nil)
	t.Cleanup(r.Close)
	ctx := context.Background()

	must(t, r, step("spawn", "name=bad program=consumer", "--no-such-flag"))
	res := r.Step(ctx, step("wait", "worker=bad until=exit", ""))
	if res.Passed || !strings.Contains(res.Why, "exited with code 1, not 0") {
		t.Fatalf("a worker that died on a bad flag passed the wait: %+v", res)
	}
	must(t, r, step("spawn", "name=bad2 program=consumer", "--no-such-flag"))
	must(t, r, step("wait", "worker=bad2 until=exit exit=1", ""))

	k, _ := steps.Lookup("wait")
	for _, attrs := range []string{"worker=a until=exit exit=x", "worker=a until=exit exit=300", "worker=a until=after-mark exit=1"} {
		if err := k.Check(step("wait", attrs, "")); err == nil {
			t.Errorf("wait %s: no error at load", attrs)
		}
	}
}

// A worker reports no exit code while it runs ("fact exit 0" used to pass
// on one still running), and ok reads nothing a worker fills.
func TestAWorkerStillRunningHasNoExitCode(t *testing.T) {
	env := labtest.Connect(t)
	r := steps.NewRun(&steps.Env{Svc: env.Svc, Binary: labtest.Lab(t), Replay: true}, &lab.Lesson{ID: "t"}, nil)
	t.Cleanup(r.Close)
	ctx := context.Background()
	must(t, r, step("spawn", "name=s1 program=provider", ""))
	for _, line := range []string{"fact exit 0", "not fact exit 1", "ok", "not error 1", "affected 0"} {
		if res := r.Step(ctx, step("expect", "", line)); res.Passed || !strings.Contains(res.Why, "cannot be checked") {
			t.Errorf("%q on a running worker: passed or failed for another reason: %+v", line, res)
		}
	}
	must(t, r, step("expect", "", "fact state running"))
	must(t, r, step("kill", "worker=s1", ""))
	if res := r.Step(ctx, step("expect", "", "fact exit 0")); res.Passed {
		t.Errorf("fact exit 0 passed on a killed worker: %+v", res)
	}
	// One that exited has its code.
	must(t, r, step("spawn", "name=bad program=consumer", "--no-such-flag"))
	must(t, r, step("wait", "worker=bad until=exit exit=1", ""))
	must(t, r, step("expect", "", "fact exit 1\nnot fact exit 0"))
}

// A kill step of a worker the learner already killed by hand (k on the
// Workers panel) says so and passes: the lesson goes on. One that exited
// by itself still fails, saying why.
func TestAKillStepOfAWorkerKilledByHandSaysSoAndGoesOn(t *testing.T) {
	env := labtest.Connect(t)
	r := steps.NewRun(&steps.Env{Svc: env.Svc, Binary: labtest.Lab(t), Replay: true}, &lab.Lesson{ID: "t"}, nil)
	t.Cleanup(r.Close)
	ctx := context.Background()
	must(t, r, step("spawn", "name=s1 program=provider", ""))
	if err := r.Workers.Get("s1").Kill(); err != nil {
		t.Fatal(err)
	}
	res := must(t, r, step("kill", "worker=s1", ""))
	if !strings.Contains(res.Observed, "already killed") {
		t.Errorf("observed %q", res.Observed)
	}
	must(t, r, step("spawn", "name=bad program=consumer", "--no-such-flag"))
	must(t, r, step("wait", "worker=bad until=exit exit=1", ""))
	if res := r.Step(ctx, step("kill", "worker=bad", "")); res.Passed || !strings.Contains(res.Why, "already exited with code 1") {
		t.Errorf("a kill of a worker that exited: %+v", res)
	}
}

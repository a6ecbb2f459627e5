package replay_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/replay"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// labEnv is the test's services, in a namespace of its own (labtest.Of).
func labEnv(t *testing.T) *labtest.Env {
	t.Helper()
	return labtest.Of(t)
}

// env is a replay's environment in the test's namespace, with the real
// lab binary (lessons start it as worker processes and kill them with
// SIGKILL).
func env(t *testing.T) *steps.Env {
	t.Helper()
	svc := labEnv(t).Svc
	// The workshop's default per-participant cap (lab serve --max-workers):
	// replaying every lesson under it shows every lesson fits.
	return &steps.Env{Svc: svc, Binary: labtest.Lab(t), Replay: true, Queues: queuesFor(svc), MaxWorkers: 8}
}

// testParallel is how many lessons the replay tests run side by side
// (LAB_TEST_PARALLEL; 1 runs them one after another, as before).
func testParallel(t *testing.T) int {
	if v := os.Getenv("LAB_TEST_PARALLEL"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("LAB_TEST_PARALLEL=%q: want a number ≥ 1", v)
		}
		return n
	}
	return 4
}

// lanes gives lesson i a namespace of its own under the test's, as
// `lab replay --parallel` does (and the harness cleans it).
func lanes(t *testing.T, e *steps.Env) func(int) *steps.Env {
	le := labEnv(t)
	return func(i int) *steps.Env {
		ls := le.Lane(i)
		return &steps.Env{Svc: ls, Binary: e.Binary, Replay: true, Queues: queuesFor(ls), MaxWorkers: e.MaxWorkers}
	}
}

// TestReplayEveryLessonPasses replays every built-in English lesson, each
// from its reset and along every path of its choices, against the real
// services, several side by side in namespaces of their own (the lessons
// that restart the broker alone, after the others); the Chinese lessons
// carry the same steps (see labs tests).
func TestReplayEveryLessonPasses(t *testing.T) {
	e := env(t)
	// Chinese here: the screen walk (ui) walks every English lesson on the
	// same servers, so each language runs once; the second matrix replays
	// both.
	lessons, err := labs.Builtin("zh")
	if err != nil {
		t.Fatal(err)
	}
	caps := e.Svc.Info.Caps()
	rep := replay.Run(context.Background(), e, lessons, replay.Options{Caps: caps, StepTimeout: 2 * time.Minute,
		Parallel: testParallel(t), Lane: lanes(t, e)})
	if len(rep.Lessons) != len(lessons) {
		t.Fatalf("%d lessons reported, %d replayed", len(rep.Lessons), len(lessons))
	}
	for i, l := range lessons {
		lr := rep.Lessons[i]
		t.Run(fmt.Sprintf("%02d-%s", l.Number, l.ID), func(t *testing.T) {
			if lr.ID != l.ID {
				t.Fatalf("report %d is %s, want %s: reports must stay in lesson order", i, lr.ID, l.ID)
			}
			if !lr.Passed {
				t.Fatalf("%s", lr.Why)
			}
			checkLedgers(t, l, lr)
			// What the screen and this Chinese replay say of each step is
			// Chinese but for code, names, SQL and what servers and
			// programs wrote.
			for i, u := range steps.Untranslated("zh", l, lr.Steps) {
				if i == 5 {
					t.Errorf("and more")
					break
				}
				t.Errorf("English in Chinese: %s", u)
			}
		})
	}
}

// checkLedgers: a lesson that runs ends with an unsafe and a safe ledger.
func checkLedgers(t *testing.T, l *lab.Lesson, lr replay.LessonReport) {
	if l.ExplainOnly {
		return
	}
	var unsafe, safe bool
	for _, g := range lr.Ledgers {
		unsafe = unsafe || g.Variant == "unsafe"
		safe = safe || g.Variant == "safe"
	}
	if !unsafe || !safe {
		t.Errorf("%s ends without both an unsafe and a safe ledger: %+v", l.ID, lr.Ledgers)
	}
}

package replay_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/replay"
	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/steps"
)

// labBinary is the real lab binary, built once: lessons start it as worker
// processes and kill them with SIGKILL.
var labBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "labbin")
	if err != nil {
		panic(err)
	}
	labBinary = filepath.Join(dir, "lab")
	out, err := exec.Command("go", "build", "-o", labBinary, "../cmd/lab").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build lab: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testNamespace keeps concurrent test runs (and learners) apart on the same
// servers.
func testNamespace() string {
	if ns := os.Getenv("LAB_TEST_NAMESPACE"); ns != "" {
		return ns
	}
	return "ci"
}

func env(t *testing.T) *steps.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	svc, err := services.Connect(ctx, services.Config{Namespace: testNamespace(), NoDocker: true,
		BrokerControl: os.Getenv("LAB_BROKER_CONTROL")}, true)
	if err != nil {
		t.Fatalf("services: %v", err)
	}
	t.Cleanup(svc.Close)
	// The workshop's default per-participant cap (lab serve --max-workers):
	// replaying every lesson under it shows every lesson fits.
	return &steps.Env{Svc: svc, Binary: labBinary, Replay: true, Queues: queuesFor(svc), MaxWorkers: 8}
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
// `lab replay --parallel` does.
func lanes(e *steps.Env) func(int) *steps.Env {
	return func(i int) *steps.Env {
		ls := e.Svc.Lane(i)
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
	lessons, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	caps := e.Svc.Info.Caps()
	rep := replay.Run(context.Background(), e, lessons, replay.Options{Caps: caps, StepTimeout: 2 * time.Minute,
		Parallel: testParallel(t), Lane: lanes(e)})
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

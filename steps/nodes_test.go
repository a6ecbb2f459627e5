package steps_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/node"
	"github.com/rmlab/lab/steps"
)

func TestNodesStepReadsOneNodeOrAListAndRefusesTheRest(t *testing.T) {
	k, _ := steps.Lookup("nodes")
	for _, c := range []struct {
		attrs string
		ok    bool
	}{
		{"start=3", true}, {"start=1", true}, {"kill=2", true}, {"restart=1,2", true}, {"stop=3", true},
		{"restart=${victim}", true},
		{"start=2", false}, {"start=1,3", false}, {"kill=4", false}, {"restart=1,1", false},
		{"restart=a", false}, {"kill=1 restart=2", false}, {"", false},
	} {
		err := k.Check(step("nodes", c.attrs, ""))
		if (err == nil) != c.ok {
			t.Errorf("nodes %s: error %v, want ok=%v", c.attrs, err, c.ok)
		}
	}
}

// The options of a lesson share its nodes: the second run takes the node
// the first left, started again, with the first run's queues gone (a
// quorum queue emptied) — no new boot.
func TestASecondRunTakesTheShelvedNodesRunningAgainWithTheQueuesGone(t *testing.T) {
	env := ownBrokerEnv(t)
	shelf := &steps.NodeShelf{}
	t.Cleanup(shelf.Close)
	e := &steps.Env{Svc: env.Svc, Replay: true, Nodes: shelf}
	l := &lab.Lesson{ID: "t", Part: lab.PartBroker}
	ctx := context.Background()

	r1 := steps.NewRun(e, l, nil)
	must(t, r1, step("nodes", "start=1", ""))
	must(t, r1, step("declare", "", "queue orders.classic\nqueue orders.quorum type=quorum"))
	must(t, r1, step("publish", "queue=orders.classic confirm", "{}"))
	must(t, r1, step("publish", "queue=orders.quorum confirm", "{}"))
	must(t, r1, step("nodes", "kill=1", ""))
	r1.Close()

	r2 := steps.NewRun(e, l, nil)
	t.Cleanup(r2.Close)
	res := must(t, r2, step("nodes", "start=1", ""))
	if !strings.Contains(res.Observed, "from the previous option, ready again") {
		t.Fatalf("the second run booted a new node instead of taking the shelved one:\n%s", res.Observed)
	}
	if !strings.Contains(res.Observed, "running") {
		t.Fatalf("the shelved node is not running again:\n%s", res.Observed)
	}
	// The first run's classic queue is gone, not merely empty.
	must(t, r2, step("queues", "", "orders.classic"))
	res = r2.Step(ctx, step("expect", "", "ready orders.classic 0"))
	if res.Passed || !strings.Contains(res.Why+res.Observed, "does not exist") {
		t.Fatalf("orders.classic is still there after the shelf's clean-up: %s\n%s", res.Why, res.Observed)
	}
	// Declared again, as the next option does, both start empty.
	must(t, r2, step("declare", "", "queue orders.classic\nqueue orders.quorum type=quorum"))
	must(t, r2, step("expect", "", "ready orders.classic 0\nready orders.quorum 0"))

	// Without a shelf every run boots its own.
	r2.Close()
	shelf.Close()
	r3 := steps.NewRun(&steps.Env{Svc: env.Svc, Replay: true}, l, nil)
	t.Cleanup(r3.Close)
	res = must(t, r3, step("nodes", "start=1", ""))
	if strings.Contains(res.Observed, "from the previous option") {
		t.Fatalf("a run without a shelf took someone's nodes:\n%s", res.Observed)
	}
}

// A lesson that starts nodes of the lab's own boots them as its run
// begins, while its first steps run (on the screen: while the learner
// reads), and its `nodes start` step takes them; a lesson that starts none
// boots nothing, and without a shelf nothing boots ahead.
func TestALessonsNodesBootWhileItsFirstStepsRunAndTheStartStepTakesThem(t *testing.T) {
	env := ownBrokerEnv(t)
	start := step("nodes", "start=1", "")
	l := &lab.Lesson{ID: "warm", Part: lab.PartBroker, Blocks: []lab.Block{{Prose: "read me"}, {Step: start}}}
	shelf := &steps.NodeShelf{}
	t.Cleanup(shelf.Close)
	r := steps.NewRun(&steps.Env{Svc: env.Svc, Replay: true, Nodes: shelf}, l, nil)
	t.Cleanup(r.Close)
	// The learner reads; the step comes later.
	deadline := time.Now().Add(2 * time.Minute)
	for len(nodeDirs(t)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(nodeDirs(t)) == 0 {
		t.Fatal("no node began to boot when the run of a lesson that starts one began")
	}
	res := must(t, r, start)
	if !strings.Contains(res.Observed, "in the background since the lesson began") {
		t.Fatalf("the start step did not take the node booted ahead:\n%s", res.Observed)
	}
	r.Close()
	shelf.Close()
	if d := nodeDirs(t); len(d) != 0 {
		t.Fatalf("node folders left after the shelf closed: %v", d)
	}

	// Without a shelf the step boots its own, and says nothing of a boot ahead.
	r2 := steps.NewRun(&steps.Env{Svc: env.Svc, Replay: true}, l, nil)
	t.Cleanup(r2.Close)
	res = must(t, r2, start)
	if strings.Contains(res.Observed, "in the background") {
		t.Fatalf("a run without a shelf claims a boot ahead:\n%s", res.Observed)
	}
}

// nodeDirs lists the node sets in the test's nodes folder.
func nodeDirs(t *testing.T) []string {
	t.Helper()
	base, err := node.Dir()
	if err != nil {
		t.Fatal(err)
	}
	es, _ := os.ReadDir(base)
	var out []string
	for _, e := range es {
		if e.IsDir() {
			if fs, _ := os.ReadDir(filepath.Join(base, e.Name())); len(fs) > 0 {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// `QUEUE gone` after a restart holds only for a queue that existed before
// it: a misspelt name used to pass.
func TestGoneAfterARestartHoldsOnlyForAQueueThatExistedBefore(t *testing.T) {
	env := ownBrokerEnv(t)
	l := &lab.Lesson{ID: "t", Part: lab.PartBroker}
	r := steps.NewRun(&steps.Env{Svc: env.Svc, Replay: true}, l, nil)
	t.Cleanup(r.Close)
	must(t, r, step("nodes", "start=1", ""))
	must(t, r, step("declare", "", "queue orders.transient transient"))
	res := r.Step(context.Background(), step("broker-restart", "", "orders.transiet gone"))
	if res.Passed || !strings.Contains(res.Why, "did not exist before the restart") {
		t.Fatalf("a misspelt queue passed as gone: %+v", res)
	}
	must(t, r, step("declare", "", "queue orders.transient transient"))
	must(t, r, step("broker-restart", "", "orders.transient gone"))
}

// ownBrokerEnv is the test's services, with RabbitMQ's server scripts for
// nodes of the lab's own (labtest.NodeServer: missing, the test fails) and
// a node folder of the test's own.
func ownBrokerEnv(t *testing.T) *labtest.Env {
	t.Helper()
	labtest.NodeServer(t)
	labtest.NodesDir(t)
	env := labtest.Connect(t)
	if !env.Svc.Info.OwnBroker {
		t.Fatalf("the lab cannot start nodes of its own here: %s", env.Svc.Info.OwnBrokerNote)
	}
	return env
}

package replay_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/replay"
	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/steps"
)

// bothLedgers ends a test lesson the way every lesson that runs must end:
// with an unsafe and a safe ledger (literal figures need no service).
const bothLedgers = "\n```ledger variant=unsafe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n"

// sleepLessons writes lessons that only let time pass: what the scheduler
// does is then all there is to see.
func sleepLessons(t *testing.T, specs ...string) []*lab.Lesson {
	t.Helper()
	dir := t.TempDir()
	for i, spec := range specs {
		needs := ""
		if strings.HasSuffix(spec, "!") {
			needs = "needs: broker-control\n"
		}
		src := fmt.Sprintf("# Lesson %d\n\n```lesson\nid: sleep-%d\nnumber: %d\npart: outbox\nexplain-only: false\n%s```\n\n```sleep for=%s\n```\n",
			i+1, i+1, i+1, needs, strings.TrimSuffix(spec, "!")) + bothLedgers
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-sleep.md", i+1)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ls, err := labs.LoadDir(dir, "en")
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// TestParallelReplayKeepsLessonOrderGivesEachLessonItsNamespaceAndRunsBrokerControlAlone
// runs five lessons two at a time: the report and the progress lines come in
// lesson order, each lesson gets a lane namespace of its own derived from the
// learner's, lessons do overlap, and the one needing broker control starts
// only after every other lesson has ended.
func TestParallelReplayKeepsLessonOrderGivesEachLessonItsNamespaceAndRunsBrokerControlAlone(t *testing.T) {
	lessons := sleepLessons(t, "100ms!", "400ms", "400ms", "400ms", "400ms")
	base := &steps.Env{Svc: &services.Services{Config: services.Config{Namespace: "alice"}}, Replay: true}
	var mu sync.Mutex
	started := map[int]time.Time{}
	namespaces := map[string]int{}
	var lines []string
	rep := replay.Run(context.Background(), base, lessons, replay.Options{
		Parallel: 2,
		Progress: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() },
		Lane: func(i int) *steps.Env {
			mu.Lock()
			defer mu.Unlock()
			started[i] = time.Now()
			ls := base.Svc.Lane(i)
			namespaces[ls.Names.NS]++
			return &steps.Env{Svc: ls, Replay: true}
		},
	})
	if rep.Passed != 5 || len(rep.Lessons) != 5 {
		t.Fatalf("passed %d of %d: %s", rep.Passed, len(rep.Lessons), rep.Summary())
	}
	for i, lr := range rep.Lessons {
		if want := fmt.Sprintf("sleep-%d", i+1); lr.ID != want {
			t.Errorf("report %d is %s, want %s", i, lr.ID, want)
		}
		if !strings.Contains(lines[i], fmt.Sprintf("sleep-%d ", i+1)) {
			t.Errorf("progress line %d is %q, want lesson sleep-%d", i, lines[i], i+1)
		}
	}
	for ns, n := range namespaces {
		if n != 1 || !strings.HasPrefix(ns, "alice_r") || services.ValidNamespace(ns) || !services.IsLaneNamespace(ns) {
			t.Errorf("namespace %q used by %d lessons; want one lesson each, alice_rN, which no learner can pick", ns, n)
		}
	}
	if len(namespaces) != 5 {
		t.Errorf("%d namespaces for 5 lessons: %v", len(namespaces), namespaces)
	}
	end := func(i int) time.Time {
		return started[i].Add(time.Duration(rep.Lessons[i].DurationMS) * time.Millisecond)
	}
	overlap := false
	for i := range 5 {
		for j := range 5 {
			if i != j && i != 0 && j != 0 && started[j].After(started[i]) && started[j].Before(end(i)) {
				overlap = true
			}
		}
		if i != 0 && started[0].Before(end(i)) {
			t.Errorf("the broker-control lesson started before lesson %d ended", i+1)
		}
	}
	if !overlap {
		t.Error("no two lessons ran side by side with --parallel 2")
	}
}

// TestParallelOneOrASingleLessonRunsInTheLearnersOwnNamespace: --parallel 1
// runs every lesson in the learner's own namespace, one after another, and
// so does a replay of one lesson whatever N is (the learner can then look
// at their own tables).
func TestParallelOneOrASingleLessonRunsInTheLearnersOwnNamespace(t *testing.T) {
	base := &steps.Env{Svc: &services.Services{Config: services.Config{Namespace: "bob"}}, Replay: true}
	for _, c := range []struct {
		parallel int
		specs    []string
	}{{1, []string{"50ms", "50ms"}}, {4, []string{"50ms"}}} {
		rep := replay.Run(context.Background(), base, sleepLessons(t, c.specs...), replay.Options{Parallel: c.parallel,
			Lane: func(int) *steps.Env {
				t.Errorf("--parallel %d, %d lessons: a lane was asked for", c.parallel, len(c.specs))
				return base
			}})
		if rep.Passed != len(c.specs) {
			t.Fatalf("%s", rep.Summary())
		}
	}
}

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
	"github.com/rmlab/lab/internal/replay"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/labs"
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
		// A progress line as each lesson ends, counted, in the order they
		// ended; the report keeps lesson order.
		if !strings.HasPrefix(lines[i], fmt.Sprintf("[%d/5] ", i+1)) {
			t.Errorf("progress line %d is %q, want it counted [%d/5]", i, lines[i], i+1)
		}
		seen := false
		for _, l := range lines {
			seen = seen || strings.Contains(l, fmt.Sprintf("sleep-%d ", i+1))
		}
		if !seen {
			t.Errorf("no progress line for sleep-%d: %q", i+1, lines)
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

// writeLesson writes one lesson file and loads it.
func writeLesson(t *testing.T, body string) *lab.Lesson {
	t.Helper()
	return writeLessonNeeding(t, "", body)
}

// writeLessonNeeding is writeLesson with needs: in the lesson block.
func writeLessonNeeding(t *testing.T, needs, body string) *lab.Lesson {
	t.Helper()
	dir := t.TempDir()
	if needs != "" {
		needs = "needs: " + needs + "\n"
	}
	src := "# A lesson\n\n```lesson\nid: one\nnumber: 1\npart: broker\n" + needs + "```\n\n" + body + bothLedgers
	if err := os.WriteFile(filepath.Join(dir, "01-one.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ls, err := labs.LoadDir(dir, "en")
	if err != nil {
		t.Fatal(err)
	}
	return ls[0]
}

const choiceAB = "```choice name=x prompt=\"which\"\na: first\nb: second\n```\n\n"

// A long lesson that owns no nodes runs its options side by side, each in
// a lane of its own, and its report keeps path order; a short one runs
// its options one after another in one lane.
func TestALongLessonsOptionsRunInLanesOfTheirOwnAndReportInPathOrder(t *testing.T) {
	for _, c := range []struct {
		sleep string
		lanes int
	}{{"${lease:70}s", 2}, {"100ms", 1}} {
		l := writeLesson(t, choiceAB+"```sleep for="+c.sleep+"\n```\n")
		other := writeLesson(t, "```sleep for=10ms\n```\n")
		other.ID, other.Number = "two", 2
		base := &steps.Env{Svc: &services.Services{Config: services.Config{Namespace: "carol"}}, Replay: true}
		var mu sync.Mutex
		lanesOfOne := map[int]bool{}
		rep := replay.Run(context.Background(), base, []*lab.Lesson{l, other}, replay.Options{Parallel: 3,
			Lane: func(i int) *steps.Env {
				mu.Lock()
				if i != 1 { // lane 1 is lesson two's
					lanesOfOne[i] = true
				}
				mu.Unlock()
				return &steps.Env{Svc: base.Svc.Lane(i), Replay: true}
			}})
		if rep.Passed != 2 {
			t.Fatalf("sleep %s: %s", c.sleep, rep.Summary())
		}
		if len(lanesOfOne) != c.lanes {
			t.Errorf("sleep %s: lesson one ran in lanes %v, want %d", c.sleep, lanesOfOne, c.lanes)
		}
		var options []string
		for _, st := range rep.Lessons[0].Steps {
			if len(options) == 0 || options[len(options)-1] != st.Option {
				options = append(options, st.Option)
			}
		}
		if strings.Join(options, " ") != "x=a x=b" {
			t.Errorf("sleep %s: steps by option %v, want x=a then x=b", c.sleep, options)
		}
	}
}

// Only a lesson that may restart the shared broker runs alone: one whose
// broker-restart follows a start of nodes of its own runs beside the
// others where the lab can own nodes.
func TestALessonRunsAloneOnlyWhenItMayRestartTheSharedBroker(t *testing.T) {
	own := writeLessonNeeding(t, "own-broker", "```nodes start=1\n```\n\n```broker-restart\n```\n")
	shared := writeLessonNeeding(t, "own-broker|broker-control", "```broker-restart\n```\n")
	with := map[lab.Capability]bool{lab.CapOwnBroker: true}
	for _, c := range []struct {
		l    *lab.Lesson
		caps map[lab.Capability]bool
		want bool
	}{{own, with, false}, {own, nil, true}, {shared, with, true}, {shared, nil, true}} {
		if got := replay.Alone(c.l, c.caps); got != c.want {
			t.Errorf("lesson %q, caps %v: alone %t, want %t", c.l.Steps()[0].Kind, c.caps, got, c.want)
		}
	}
}

// A lesson's options share its nodes, so the cost counts one boot; replay's
// shortened waits are what it counts.
func TestCostCountsOneNodeBootAndReplaysShortWaits(t *testing.T) {
	boots := writeLessonNeeding(t, "own-broker", "```nodes start=3\n```\n\n"+choiceAB+"```nodes restart=1\n```\n")
	if got := replay.Cost(boots); got < 19 || got > 21 {
		t.Errorf("a cluster and a restart per option cost %.2f s, want about 12 + 2×4", got)
	}
	waits := writeLesson(t, "```sleep for=${lease:30}s\n```\n")
	if got := replay.Cost(waits); got < 3 || got > 3.5 {
		t.Errorf("${lease:30}s costs %.2f s, want replay's 3", got)
	}
}

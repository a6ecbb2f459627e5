package mutation_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/mutation"
	"github.com/rmlab/lab/internal/replay"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// run replays lessons side by side, each in a lane of the test's namespace,
// and returns their reports in order.
func run(t *testing.T, lessons []*lab.Lesson) []replay.LessonReport {
	t.Helper()
	env := labtest.Of(t)
	bin := labtest.Lab(t)
	base := &steps.Env{Svc: env.Svc, Binary: bin, Replay: true, Queues: broker.QueueReader(env.Svc)}
	rep := replay.Run(context.Background(), base, lessons, replay.Options{StepTimeout: time.Minute, Caps: env.Svc.Info.Caps(), Parallel: 4,
		Lane: func(i int) *steps.Env {
			ls := env.Lane(i)
			return &steps.Env{Svc: ls, Binary: bin, Replay: true, Queues: broker.QueueReader(ls)}
		}})
	if len(rep.Lessons) != len(lessons) {
		t.Fatalf("%d reports for %d lessons", len(rep.Lessons), len(lessons))
	}
	return rep.Lessons
}

// Every verb has a case that must pass (the fixture replays green) and a
// case that must fail (its mutant fails at the line changed), on a step
// that fills what the verb reads; so do ledgers, error= codes and exit
// codes. (Verbs on a step that does not fill them, and misspelt names,
// are steps' and labs' tests.)
func TestEveryVerbHoldsOnTheFixtureAndFailsOnItsMutant(t *testing.T) {
	l, err := labs.LoadFile("testdata/every-verb.md")
	if err != nil {
		t.Fatal(err)
	}
	// unavailable needs a node that is down: a fixture of its own, on a
	// cluster of the lab's own, with only the verb's mutant (each mutant
	// boots a cluster; the ledger that counts it is steps' test).
	u, err := labs.LoadFile("testdata/unavailable.md")
	if err != nil {
		t.Fatal(err)
	}
	labtest.NodesDir(t)
	var ms []mutation.Mutant
	for _, m := range mutation.Of(l) {
		if m.Kind == mutation.Expected {
			ms = append(ms, m)
		}
	}
	for _, m := range mutation.Of(u) {
		if m.Kind == mutation.Expected && strings.HasPrefix(m.From, "unavailable ") {
			ms = append(ms, m)
		}
	}
	covered := verbsOf(ms)
	for _, v := range steps.VerbNames() {
		if !covered[v] {
			t.Errorf("no mutant of verb %s: add it to a fixture", v)
		}
	}
	for _, site := range []string{"expect=duplicated", "error=1062", "exit=1"} {
		if !covered[site] {
			t.Errorf("no mutant of %s", site)
		}
	}
	// The fixtures have one path each: their own replays, with answers
	// replaced, judge every answer-replaced mutant.
	var answered []mutation.Mutant
	for _, f := range []*lab.Lesson{l, u} {
		if n := len(steps.Paths(f)); n != 1 {
			t.Fatalf("%s has %d paths; its answer-replaced mutants are judged on its own replay", f.ID, n)
		}
		f.ReplaceAnswers = true
		for _, m := range mutation.Of(f) {
			if m.Kind == mutation.AnswerReplaced {
				answered = append(answered, m)
			}
		}
	}
	replacedVerbs := verbsOf(answered)
	for _, v := range steps.VerbNames() {
		if !replacedVerbs[v] {
			t.Errorf("no answer-replaced mutant of verb %s: add it to a fixture", v)
		}
	}
	fixtures := []*lab.Lesson{l, u}
	lessons := slices.Clone(fixtures)
	for _, m := range ms {
		lessons = append(lessons, m.Lesson)
	}
	reps := run(t, lessons)
	for i, f := range fixtures {
		if !reps[i].Passed {
			t.Fatalf("the fixture %s itself fails: %s", f.ID, reps[i].Why)
		}
	}
	for i, m := range ms {
		if v, why := m.Judge(reps[len(fixtures)+i]); v != mutation.Killed {
			t.Errorf("%s %s: %s", v, m, why)
		}
	}
	for _, m := range answered {
		rep := reps[0]
		if m.ID == u.ID {
			rep = reps[1]
		}
		if v, why := m.Judge(rep); v != mutation.Killed {
			t.Errorf("%s %s: %s", v, m, why)
		}
	}
}

// A check given another answer than the server's refuses it where it
// reads the answer (KILLED); a contains that finds its text in a column's
// name holds with any answer, and its mutant SURVIVES, naming the line.
func TestAnAnswerReplacedIsKilledOnlyWhereTheCheckReadsTheAnswer(t *testing.T) {
	l, err := labs.LoadFile("testdata/answers.md")
	if err != nil {
		t.Fatal(err)
	}
	var ms []mutation.Mutant
	for _, m := range mutation.Of(l) {
		if m.Kind == mutation.AnswerReplaced {
			ms = append(ms, m)
		}
	}
	if len(ms) != 7 {
		t.Fatalf("%d answer-replaced mutants %v, want one per expectation line and each ledger's verdict (7)", len(ms), ms)
	}
	for _, m := range ms[1:] {
		if m.Lesson != ms[0].Lesson {
			t.Fatalf("%s has a replay of its own; the mutants of one path share one", m)
		}
	}
	reps := run(t, []*lab.Lesson{ms[0].Lesson})
	for _, m := range ms {
		v, why := m.Judge(reps[0])
		want := mutation.Killed
		if m.From == "contains points" {
			want = mutation.Survived
		}
		if v != want {
			t.Errorf("%s: %s (%s), want %s", m, v, why, want)
		}
		if v == mutation.Survived && !strings.Contains(why, "contains points") {
			t.Errorf("%s: the survivor's story %q does not name its check", m, why)
		}
	}
	// The replay without replaced answers makes no second check: its
	// mutants are BROKEN, never KILLED.
	plain := run(t, []*lab.Lesson{l})
	if v, _ := ms[0].Judge(plain[0]); v != mutation.Broken {
		t.Errorf("judged on a replay that replaced nothing: %s, want BROKEN", v)
	}
}

// verbsOf is the verbs (and step sites: error=1062) the mutants change.
func verbsOf(ms []mutation.Mutant) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		verb, _, _ := strings.Cut(strings.TrimPrefix(m.From, "not "), " ")
		out[verb] = true
	}
	return out
}

// The judge tells a mutant that passed (the check holds whatever
// happened) and one that failed before its change (the lesson broke) from
// one killed where it was changed.
func TestTheJudgeKillsOnlyAFailureAtTheChangedStep(t *testing.T) {
	m := mutation.Mutant{Kind: mutation.Expected, ID: "x", Step: 20, Line: 21, From: "value 1", To: "value 2"}
	f := mutation.Mutant{Kind: mutation.FaultRemoved, ID: "x", Step: 20, Line: 20, From: "kill worker=c1", To: "resume worker=c1"}
	a := mutation.Mutant{Kind: mutation.AnswerReplaced, ID: "x", Step: 20, Line: 21, From: "value 1"}
	for _, c := range []struct {
		m    mutation.Mutant
		lr   replay.LessonReport
		want mutation.Verdict
	}{
		{m, replay.LessonReport{Passed: true}, mutation.Survived},
		{m, replay.LessonReport{Steps: []lab.Result{{Line: 10, Passed: true}, {Line: 20, Why: "value is 1"}}}, mutation.Killed},
		{m, replay.LessonReport{Steps: []lab.Result{{Line: 10, Passed: true}, {Line: 30, Why: "value is 1"}}}, mutation.Broken},
		{m, replay.LessonReport{Steps: []lab.Result{{Line: 10, Why: "no server"}}, Why: "no server"}, mutation.Broken},
		{m, replay.LessonReport{Skipped: true, Why: "needs broker-control"}, mutation.Broken},
		// A removed fault: any step after it failing is the kill; one
		// before it is the lesson's own failure.
		{f, replay.LessonReport{Passed: true}, mutation.Survived},
		{f, replay.LessonReport{Steps: []lab.Result{{Line: 10, Passed: true}, {Line: 30, Why: "consumers is 1"}}}, mutation.Killed},
		{f, replay.LessonReport{Steps: []lab.Result{{Line: 10, Why: "no server"}}, Why: "no server"}, mutation.Broken},
		{f, replay.LessonReport{Steps: []lab.Result{{Line: 10, Passed: true}, {Line: 20, Why: "c1 is not paused"}}}, mutation.Broken},
		// A worker the lesson starts again under the same name, still
		// running because it was not killed: the mutant's doing.
		{f, replay.LessonReport{Steps: []lab.Result{{Line: 10, Passed: true}, {Line: 30, Kind: "spawn", Why: "worker c1 is still running"}}}, mutation.Broken},
		// A check given another answer: refused is the kill, held the
		// survivor; no second check (its own failure, an earlier one, a
		// skip, a replay that replaced nothing) is the lesson's.
		{a, replay.LessonReport{Passed: true, Steps: []lab.Result{{Line: 20, Passed: true, Replaced: []lab.Replacement{{Line: 21, Why: "value is 2"}}}}}, mutation.Killed},
		{a, replay.LessonReport{Passed: true, Steps: []lab.Result{{Line: 20, Passed: true, Replaced: []lab.Replacement{{Line: 21, Held: true}}}}}, mutation.Survived},
		{a, replay.LessonReport{Passed: true, Steps: []lab.Result{{Line: 20, Passed: true, Replaced: []lab.Replacement{{Line: 22, Held: true}}}}}, mutation.Broken},
		{a, replay.LessonReport{Steps: []lab.Result{{Line: 20, Why: "value is 1"}}}, mutation.Broken},
		{a, replay.LessonReport{Steps: []lab.Result{{Line: 10, Why: "no server"}}, Why: "no server"}, mutation.Broken},
		{a, replay.LessonReport{Skipped: true, Why: "needs broker-control"}, mutation.Broken},
		{a, replay.LessonReport{Passed: true, Steps: []lab.Result{{Line: 20, Passed: true}}}, mutation.Broken},
	} {
		if got, why := c.m.Judge(c.lr); got != c.want {
			t.Errorf("%s %+v: %s (%s), want %s", c.m.Kind, c.lr, got, why, c.want)
		}
	}
}

// A fault step taken out (a paused worker not killed goes on, as it would
// had it not crashed): the check that reads what the kill did fails
// (KILLED); a kill nothing after it reads leaves the lesson green, and its
// mutant SURVIVES, naming the fault.
func TestAFaultRemovedIsKilledOnlyWhereACheckDependsOnIt(t *testing.T) {
	l, err := labs.LoadFile("testdata/faults.md")
	if err != nil {
		t.Fatal(err)
	}
	var ms []mutation.Mutant
	for _, m := range mutation.Of(l) {
		if m.Kind == mutation.FaultRemoved {
			ms = append(ms, m)
		}
	}
	if len(ms) != 2 || ms[0].From != "kill worker=c1" || ms[1].From != "kill worker=c2" {
		t.Fatalf("fault-removed mutants %v, want the kills of c1 and c2", ms)
	}
	for _, m := range ms {
		resumed := false
		for _, s := range m.Lesson.Steps() {
			if s.Line == m.Step {
				resumed = s.Kind == "resume" && s.Attrs["worker"] != ""
				if !resumed {
					t.Errorf("%s still holds a %s step at line %d; a paused worker not killed is resumed", m, s.Kind, m.Step)
				}
			}
		}
		if !resumed {
			t.Errorf("%s: no resume in place of the kill at line %d", m, m.Step)
		}
	}
	reps := run(t, []*lab.Lesson{l, ms[0].Lesson, ms[1].Lesson})
	if !reps[0].Passed {
		t.Fatalf("the fixture itself fails: %s", reps[0].Why)
	}
	if v, why := ms[0].Judge(reps[1]); v != mutation.Killed || !strings.Contains(why, "ready") {
		t.Errorf("%s: %s (%s), want KILLED at the ready check", ms[0], v, why)
	}
	if v, why := ms[1].Judge(reps[2]); v != mutation.Survived || !strings.Contains(why, "kill worker=c2") {
		t.Errorf("%s: %s (%s), want SURVIVED naming the kill", ms[1], v, why)
	}
}

// Each expectation line's mutant cannot hold where the original held.
func TestALinesMutantChangesItsExpectedValue(t *testing.T) {
	for from, to := range map[string]string{
		"value 10": "value 11", "row 7 | NEW": "row 7 | NEW-mutant", "confirm ack": "confirm nack",
		"not contains x": "contains x", "ok": "not ok", "ready orders 2": "ready orders 3",
		"elapsed >= 1s": "elapsed < 1s", "redelivered true": "redelivered false", "tags 1 2": "tags 1 2 99",
		"fact verdict pass": "fact verdict pass-mutant", "header x-delivery-count 1": "header x-delivery-count 2",
	} {
		if got, ok := mutation.Line(from); !ok || got != to {
			t.Errorf("%q → %q (%v), want %q", from, got, ok, to)
		}
	}
}

// A sample is drawn per lesson, the same for the same seed, and a mutant
// keeps only the path on which its step runs.
func TestASampleIsPerLessonAndRepeatsWithItsSeed(t *testing.T) {
	ls, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	var all []mutation.Mutant
	for _, l := range ls {
		all = append(all, mutation.Of(l)...)
	}
	a, b := mutation.Sample(all, 2, 7, nil), mutation.Sample(all, 2, 7, nil)
	if !slices.EqualFunc(a, b, func(x, y mutation.Mutant) bool { return x.String() == y.String() }) {
		t.Fatal("the same seed drew different mutants")
	}
	per := map[string]int{}
	faults := 0
	for _, m := range a {
		per[m.ID+" "+string(m.Kind)]++
		if m.Kind == mutation.FaultRemoved {
			faults++
		}
		if len(steps.Paths(m.Lesson)) != 1 {
			t.Errorf("%s keeps %d paths", m, len(steps.Paths(m.Lesson)))
		}
	}
	for _, l := range ls {
		if n := per[l.ID+" expected"]; n > 2 || n == 0 && !l.ExplainOnly {
			t.Errorf("%s: %d expected-value mutants in the sample", l.ID, n)
		}
		if n := per[l.ID+" fault-removed"]; n > 2 {
			t.Errorf("%s: %d fault-removed mutants in the sample", l.ID, n)
		}
	}
	if faults < 10 {
		t.Errorf("%d fault-removed mutants drawn from the built-in lessons, want one or two from each lesson with a fault", faults)
	}
	only, err := mutation.ParseKinds("fault-removed")
	if err != nil {
		t.Fatal(err)
	}
	drawn := mutation.Sample(all, 1, 7, only)
	if len(drawn) == 0 {
		t.Fatal("--kind fault-removed drew nothing from the built-in lessons")
	}
	// The same seed draws the same fault-removed mutants with or without
	// --kind: a survivor's --seed runs it again either way.
	var both []string
	for _, m := range mutation.Sample(all, 1, 7, nil) {
		if m.Kind == mutation.FaultRemoved {
			both = append(both, m.String())
		}
	}
	for i, m := range drawn {
		if m.Kind != mutation.FaultRemoved {
			t.Errorf("--kind fault-removed drew %s", m)
		}
		if i >= len(both) || both[i] != m.String() {
			t.Errorf("--kind fault-removed --seed 7 drew %s where the same seed without --kind drew %v", m, both)
			break
		}
	}
	if _, err := mutation.ParseKinds("expected,nonsense"); err == nil {
		t.Error("an unknown kind was accepted")
	}
}

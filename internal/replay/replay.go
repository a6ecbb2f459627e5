// Package replay runs lessons with no terminal, each from a clean reset and
// once per combination of its choices, and reports what it observed as JSON,
// JUnit XML or a Markdown transcript.
package replay

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/steps"
)

// Report is the whole replay, in the shape `lab replay --json` prints.
type Report struct {
	Lessons []LessonReport `json:"lessons"`
	Passed  int            `json:"passed"`
	Failed  int            `json:"failed"`
	Skipped int            `json:"skipped"`
}

// LessonReport is one lesson over all its paths.
type LessonReport struct {
	ID     string   `json:"id"`
	Number int      `json:"number"`
	Title  string   `json:"title"`
	Part   lab.Part `json:"part"`
	Passed bool     `json:"passed"`
	// Skipped: the lesson ran (or not at all) without checking all it
	// claims, because the servers lack what a step needs (no broker
	// control, no nodes of its own); Why says what. It is not a pass.
	Skipped     bool         `json:"skipped,omitempty"`
	ExplainOnly bool         `json:"explain_only,omitempty"`
	DurationMS  int64        `json:"duration_ms"`
	Why         string       `json:"why,omitempty"`
	Steps       []lab.Result `json:"steps"`
	Ledgers     []lab.Ledger `json:"ledgers,omitempty"`
	File        string       `json:"-"`
	skipWhy     string
}

// Options steer a replay.
type Options struct {
	// Progress, when set, gets one line per lesson (stderr in the CLI), in
	// lesson order whether lessons run one after another or side by side.
	Progress func(line string)
	// StepTimeout bounds every step (a stuck worker never hangs CI).
	StepTimeout time.Duration
	// Caps are the capabilities the servers offer; a lesson needing a missing
	// one fails with the reason instead of running.
	Caps map[lab.Capability]bool
	// Parallel runs up to this many lessons side by side, lesson i in the
	// Env Lane(i) returns: a namespace of its own, which no other lesson,
	// learner or replay uses, and the same one each time (a transcript
	// names the same databases run after run). Replay mostly waits (on
	// leases, sleeps, confirms, workers), so lessons share two cores well.
	// 0 or 1, or a single lesson: one after another, all in env (the
	// learner's own namespace).
	Parallel int
	Lane     func(i int) *steps.Env
	// Finished, when set, is called with each lesson's report as the
	// lesson ends, one call at a time, instead of Progress (lab replay
	// --mutate judges mutants so).
	Finished func(i int, lr LessonReport)
	// Done, when set, is called with a lane's Env once its lesson ended
	// (`lab replay` removes the lane's databases, queues and keys there).
	Done func(env *steps.Env)
	// Lang is the language of the lessons, and of the progress lines a
	// person reads ("zh": 通过/失败/跳过); reports stay in English.
	Lang string
}

// Alone reports whether a lesson must run with no other lesson beside it:
// one that restarts the shared broker cuts every connection to it. A
// lesson whose broker-restart comes after a `nodes start` restarts a node
// of its own, and disturbs nobody, where the lab can own nodes (caps).
func Alone(l *lab.Lesson, caps map[lab.Capability]bool) bool {
	if slices.Contains(l.Needs, lab.CapBrokerControl) {
		return true
	}
	ownNodes := false
	for _, s := range l.Steps() {
		if s.Kind == "nodes" && s.Attrs["start"] != "" && caps[lab.CapOwnBroker] {
			ownNodes = true
		}
		if s.Kind == "broker-restart" && !ownNodes {
			return true
		}
	}
	return false
}

// Run replays lessons and reports them in the order given.
func Run(ctx context.Context, env *steps.Env, lessons []*lab.Lesson, opt Options) Report {
	done := make([]*LessonReport, len(lessons))
	var mu sync.Mutex
	finished := 0
	finish := func(i int, lr LessonReport) {
		mu.Lock()
		defer mu.Unlock()
		done[i] = &lr
		finished++
		// A line as each lesson ends, counted: with the longest lessons
		// started first, waiting for lesson order printed nothing for most
		// of a replay. The report keeps lesson order.
		if opt.Finished != nil {
			opt.Finished(i, lr)
		} else {
			progress(opt, lessons[i], lr, finished, len(lessons))
		}
	}

	if opt.Parallel <= 1 || opt.Lane == nil || len(lessons) < 2 {
		for i, l := range lessons {
			finish(i, Lesson(ctx, env, l, opt))
			if ctx.Err() != nil {
				break
			}
		}
	} else {
		runLanes(ctx, lessons, opt, finish)
	}
	var rep Report
	for _, lr := range done {
		if lr == nil { // interrupted before it started
			continue
		}
		rep.Lessons = append(rep.Lessons, *lr)
		switch {
		case lr.Passed:
			rep.Passed++
		case lr.Skipped:
			rep.Skipped++
		default:
			rep.Failed++
		}
	}
	return rep
}

// runLanes runs up to opt.Parallel units at once, each in a lane of its
// own, the costliest first so that a long lesson does not start last; then,
// with nothing beside them, the lessons that must run alone. A unit is a
// lesson, or one path of a lesson whose options share nothing and take
// long (lesson 31's chaos runs): those paths run side by side, each in a
// lane of its own, and their reports join in path order.
func runLanes(ctx context.Context, lessons []*lab.Lesson, opt Options, finish func(int, LessonReport)) {
	type unit struct {
		lesson int
		paths  []map[string]string
		lane   int
		cost   float64
		path   int // which of the lesson's paths, when they run apart
	}
	var side []unit
	var alone []int
	extra := len(lessons) // lanes past the lessons' own: a lesson's other paths
	for i, l := range lessons {
		if Alone(l, opt.Caps) {
			alone = append(alone, i)
			continue
		}
		paths := steps.Paths(l)
		if per := Cost(l) / float64(len(paths)); len(paths) > 1 && !startsNodes(l) && per >= splitCost {
			for j, p := range paths {
				lane := i
				if j > 0 {
					lane = extra
					extra++
				}
				side = append(side, unit{i, []map[string]string{p}, lane, per, j})
			}
			continue
		}
		side = append(side, unit{i, paths, i, Cost(l), 0})
	}
	slices.SortStableFunc(side, func(a, b unit) int {
		switch {
		case a.cost > b.cost:
			return -1
		case a.cost < b.cost:
			return 1
		}
		return 0
	})
	// The paths of a split lesson report once all are in.
	var mu sync.Mutex
	parts := map[int][]LessonReport{} // by lesson, by path
	first := map[int]time.Time{}
	want := map[int]int{}
	for _, u := range side {
		want[u.lesson]++
	}
	for l, n := range want {
		if n > 1 {
			parts[l] = make([]LessonReport, n)
		}
	}
	got := map[int]int{}
	work := make(chan unit)
	var wg sync.WaitGroup
	for range min(opt.Parallel, max(len(side), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				env := opt.Lane(u.lane)
				start := time.Now()
				lr := lessonPaths(ctx, env, lessons[u.lesson], u.paths, opt)
				if opt.Done != nil {
					opt.Done(env)
				}
				if want[u.lesson] == 1 {
					finish(u.lesson, lr)
					continue
				}
				mu.Lock()
				if t, ok := first[u.lesson]; !ok || start.Before(t) {
					first[u.lesson] = start
				}
				parts[u.lesson][u.path] = lr
				got[u.lesson]++
				var ps []LessonReport
				if got[u.lesson] == want[u.lesson] {
					ps = parts[u.lesson]
				}
				began := first[u.lesson]
				mu.Unlock()
				if ps != nil {
					finish(u.lesson, merge(ps, time.Since(began)))
				}
			}
		}()
	}
	for _, u := range side {
		if ctx.Err() != nil {
			break
		}
		work <- u
	}
	close(work)
	wg.Wait()
	for _, i := range alone {
		if ctx.Err() != nil {
			break
		}
		env := opt.Lane(i)
		finish(i, Lesson(ctx, env, lessons[i], opt))
		if opt.Done != nil {
			opt.Done(env)
		}
	}
}

// splitCost is the estimated seconds per path from which a lesson's paths
// run side by side: below it a lane's own reset costs more than it saves.
const splitCost = 6

func startsNodes(l *lab.Lesson) bool {
	for _, s := range l.Steps() {
		if s.Kind == "nodes" {
			return true
		}
	}
	return false
}

// Cost estimates a lesson's replay time in seconds from what it runs on
// every path, for running the longest first: what dominates is booting
// RabbitMQ nodes (once a lesson: its options share them), chaos runs,
// sleeps and worker waits (measured with lab replay --all --json).
func Cost(l *lab.Lesson) float64 {
	total := 0.0
	booted := false
	for _, path := range steps.Paths(l) {
		// A run that never runs a step: it says which steps apply on the
		// path and what their durations expand to in replay.
		r := steps.NewRun(&steps.Env{Replay: true}, l, path)
		for _, s := range l.Steps() {
			if r.Applies(s) {
				total += stepCost(r, s, &booted)
			}
		}
	}
	return total
}

func stepCost(r *steps.Run, s *lab.Step, booted *bool) float64 {
	secs := func(key string, def float64) float64 {
		v := r.Expand(s.Attrs[key])
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			return n
		}
		if d, err := time.ParseDuration(v); err == nil {
			return d.Seconds()
		}
		return def
	}
	switch s.Kind {
	case "nodes":
		switch {
		case s.Attrs["start"] == "3" && !*booted:
			*booted = true
			return 12
		case s.Attrs["start"] != "" && !*booted:
			*booted = true
			return 5
		case s.Attrs["restart"] != "":
			return 4
		}
		return 0.2
	case "broker-restart":
		return 5
	case "chaos":
		return secs("duration", 8) + 5
	case "sleep":
		return secs("for", 1)
	case "wait", "await":
		return 1.5
	case "spawn", "kill", "publish", "consume", "queues":
		return 0.3
	}
	return 0.05
}

func progress(opt Options, l *lab.Lesson, lr LessonReport, n, of int) {
	if opt.Progress == nil {
		return
	}
	verdict := words(opt.Lang).pass
	switch {
	case lr.Skipped:
		verdict = words(opt.Lang).skip
	case !lr.Passed:
		verdict = words(opt.Lang).fail
	}
	line := fmt.Sprintf("%s %2d %-28s %6.1fs", verdict, l.Number, l.ID, float64(lr.DurationMS)/1000)
	if of > 1 {
		line = fmt.Sprintf("[%*d/%d] ", len(strconv.Itoa(of)), n, of) + line
	}
	if lr.ExplainOnly {
		line += words(opt.Lang).explainOnly
	}
	if lr.Why != "" {
		line += "  " + whyIn(opt.Lang, lr.Why)
	}
	opt.Progress(line)
}

// Lesson replays one lesson along every path of its choices.
func Lesson(ctx context.Context, env *steps.Env, l *lab.Lesson, opt Options) (lr LessonReport) {
	return lessonPaths(ctx, env, l, steps.Paths(l), opt)
}

// lessonPaths replays l along the given paths, one after another in env.
func lessonPaths(ctx context.Context, env *steps.Env, l *lab.Lesson, paths []map[string]string, opt Options) (lr LessonReport) {
	start := time.Now()
	lr = LessonReport{ID: l.ID, Number: l.Number, Title: l.Title, Part: l.Part, ExplainOnly: l.ExplainOnly, Passed: true, File: l.File,
		Steps: []lab.Result{}} // [] not null in JSON, for an explain-only lesson too
	defer func() { lr.DurationMS = time.Since(start).Milliseconds() }()
	if miss := l.Unmet(opt.Caps); opt.Caps != nil && len(miss) > 0 {
		lr.Passed, lr.Skipped = false, true
		lr.Why = fmt.Sprintf("needs %s, which the servers do not offer (see `lab doctor`)", strings.Join(miss, ", "))
		return lr
	}
	timeout := opt.StepTimeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	if env.Nodes == nil {
		// The paths of a lesson share its lab-owned nodes: the next option
		// starts from the cluster the last one left, not from a new boot.
		e := *env
		e.Nodes = &steps.NodeShelf{}
		env = &e
		defer e.Nodes.Close()
	}
	for _, path := range paths {
		r := steps.NewRun(env, l, path)
		for _, s := range l.Steps() {
			c, cancel := context.WithTimeout(ctx, timeout)
			res := r.Step(c, s)
			cancel()
			// Steps off this path are noise; a step that skipped itself
			// (no broker control here, say) keeps its reason in the report.
			if res.Skipped && !r.Applies(s) {
				continue
			}
			lr.Steps = append(lr.Steps, res)
			if res.Skipped && !lr.Skipped {
				lr.Skipped = true
				lr.skipWhy = fmt.Sprintf("%s:%d %s skipped: %s", l.File, s.Line, s.Kind, res.Why)
			}
			if !res.Passed {
				lr.Passed = false
				if lr.Why == "" {
					lr.Why = fmt.Sprintf("%s:%d %s: %s", l.File, s.Line, s.Kind, res.Why)
					if res.Option != "" {
						lr.Why += " [" + res.Option + "]"
					}
				}
				break
			}
		}
		lr.Ledgers = append(lr.Ledgers, r.Ledgers...)
		r.Close()
		if ctx.Err() != nil {
			lr.Passed = false
			lr.Why = "interrupted"
			break
		}
	}
	lr.settle()
	return lr
}

// settle decides a lesson that checked less than it claims: SKIPPED, not
// PASS (a failure stays a failure).
func (lr *LessonReport) settle() {
	switch {
	case !lr.Skipped:
	case lr.Passed: // all that ran passed, but not all of it ran
		lr.Passed = false
		lr.Why = lr.skipWhy
	default: // a failure stays a failure
		lr.Skipped = false
	}
}

// merge joins the reports of a lesson's paths run side by side, in path
// order; its duration is the wall time from the first start to the last end.
func merge(parts []LessonReport, wall time.Duration) LessonReport {
	lr := parts[0]
	lr.Steps = append([]lab.Result{}, parts[0].Steps...)
	lr.Ledgers = append([]lab.Ledger(nil), parts[0].Ledgers...)
	for _, p := range parts[1:] {
		lr.Steps = append(lr.Steps, p.Steps...)
		lr.Ledgers = append(lr.Ledgers, p.Ledgers...)
	}
	// A failed path fails the lesson; else a skipped one skips it.
	var failed, skipped []LessonReport
	for _, p := range parts {
		switch {
		case p.Skipped:
			skipped = append(skipped, p)
		case !p.Passed:
			failed = append(failed, p)
		}
	}
	lr.Passed, lr.Skipped, lr.Why = len(failed)+len(skipped) == 0, len(failed) == 0 && len(skipped) > 0, ""
	if len(failed) > 0 {
		lr.Why = failed[0].Why
	} else if len(skipped) > 0 {
		lr.Why = skipped[0].Why
	}
	lr.DurationMS = wall.Milliseconds()
	return lr
}

// Summary is the last line a person reads.
func (r Report) Summary() string { return r.SummaryIn("en") }

// SummaryIn is Summary in lang ("zh" or English).
func (r Report) SummaryIn(lang string) string {
	var failed, skipped []string
	for _, l := range r.Lessons {
		switch {
		case l.Skipped:
			skipped = append(skipped, l.ID)
		case !l.Passed:
			failed = append(failed, l.ID)
		}
	}
	w := words(lang)
	s := fmt.Sprintf(w.summary, r.Passed, r.Failed)
	if len(failed) > 0 {
		s += fmt.Sprintf(w.which, strings.Join(failed, ", "))
	}
	if len(skipped) > 0 {
		s += fmt.Sprintf(w.skipped, len(skipped), strings.Join(skipped, ", "))
	}
	return s
}

// progressWords are the words of the lines a person reads during a replay.
type progressWords struct {
	pass, fail, skip, explainOnly, summary, which, skipped string
}

func words(lang string) progressWords {
	if lang == "zh" {
		return progressWords{"通过", "失败", "跳过", "  （只讲解）",
			"%d 课通过，%d 课失败", "（%s）", "，%d 课跳过（%s：没有跑完每一项检查；lab doctor 会说原因）"}
	}
	return progressWords{"PASS", "FAIL", "SKIP", "  (explain-only)",
		"%d passed, %d failed", " (%s)", ", %d skipped (%s: not every check ran; lab doctor says why)"}
}

// AddUnloadable records lesson files that did not load (one error per file,
// `file:line: problem`) as failed lessons, so `replay --all` over an
// instructor's directory fails and its JSON, JUnit and transcript name each
// file and what is wrong with it.
func (r *Report) AddUnloadable(errs []error) {
	for _, err := range errs {
		r.Lessons = append(r.Lessons, LessonReport{ID: "unloadable-lesson", Title: "a lesson file that did not load",
			Why: err.Error(), Steps: []lab.Result{}})
		r.Failed++
	}
}

// whyIn is a lesson's why ("FILE:LINE KIND: why") with the step's why in
// lang's words where it is one of the lab's own.
func whyIn(lang, why string) string {
	where, what, ok := strings.Cut(why, ": ")
	if !ok {
		return why
	}
	return where + ": " + steps.InLanguage(lang, what)
}

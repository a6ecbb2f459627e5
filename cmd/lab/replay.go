package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/mutation"
	"github.com/rmlab/lab/internal/replay"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/workshop"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
)

type replayFlags struct {
	all, json, strict bool
	asParticipant     bool
	junit, transcript string
	kinds             string
	parallel, mutate  int
	repeat            int
	seed              uint64
}

// defaultParallel is how many lessons `lab replay` runs side by side unless
// told: replay mostly waits, so two per core and one more (on 2 cores, 4
// lanes took 60.1–61.0 s for the 33 lessons and 5 took 49.1–57.4 s: the
// lanes beside lesson 19's, not lesson 19, set the end; at eight the
// longest lesson bounds the run anyway), and never more than the
// MySQL server's free connections have room for: on a workshop's shared
// server every learner's lanes count.
func defaultParallel(ctx context.Context, svc *services.Services) int {
	n := min(2*runtime.NumCPU()+1, 8)
	if room, _, err := connectionRoom(ctx, svc); err == nil {
		n = min(n, max(room, 1))
	}
	return n
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, g := command("replay", `usage: lab replay [ID|N ...|--all|FILE.md] [--json] [--junit FILE] [--transcript FILE] [--parallel N] [--strict]
                  [--mutate N [--kind K,...] [--seed S]] [flags]

runs lessons with no terminal, each from its reset and along every path of its choices
`, stderr)
	var f replayFlags
	fs.BoolVar(&f.json, "json", false, "print the JSON report on stdout")
	fs.StringVar(&f.junit, "junit", "", "write JUnit XML to FILE")
	fs.StringVar(&f.transcript, "transcript", "", "write a Markdown transcript to FILE")
	fs.BoolVar(&f.all, "all", false, "every lesson")
	fs.IntVar(&f.parallel, "parallel", 0, "lessons side by side (0: the default for this machine)")
	fs.IntVar(&f.mutate, "mutate", 0, "N mutants of each kind of each lesson instead of the lessons; each must fail where it was changed")
	fs.StringVar(&f.kinds, "kind", "", "with --mutate: the kinds of mutant, comma-separated: expected (an expected value changed: it must fail there), fault-removed (a fault step taken out: a step after it must fail), answer-replaced (a check given another answer than the server's: it must refuse it); default all three")
	fs.IntVar(&f.repeat, "repeat", 1, "replay the lessons N times over, then print each lesson's failures of N (a flake's measure)")
	fs.Uint64Var(&f.seed, "seed", 0, "with --mutate: which mutants (0: drawn from the clock, printed)")
	// CI must not count a lesson that checked less than it claims as green.
	fs.BoolVar(&f.asParticipant, "as-participant", false, "run each lesson as lab serve runs a workshop participant's: as a MySQL user granted its namespace's databases only, in a RabbitMQ vhost of its own")
	fs.BoolVar(&f.strict, "strict", os.Getenv("CI") != "", "a lesson that skipped a check fails the run (the default when $CI is set)")
	if code, ok := parse(fs, g, args, stderr); !ok {
		return code
	}
	return cmdReplay(ctx, *g, fs.Args(), f, stdout, stderr)
}

func cmdReplay(ctx context.Context, g globals, args []string, f replayFlags, stdout, stderr io.Writer) int {
	if f.parallel < 0 {
		fmt.Fprintln(stderr, "lab replay: "+sayParallelN.F())
		return 2
	}
	if f.mutate < 0 || f.mutate > 0 && (f.json || f.junit != "" || f.transcript != "") {
		fmt.Fprintln(stderr, "lab replay: "+sayMutateN.F())
		return 2
	}
	kinds, err := mutation.ParseKinds(f.kinds)
	if err != nil || f.kinds != "" && f.mutate == 0 {
		if err == nil {
			err = errors.New(sayKindNeedsMutate.F())
		}
		fmt.Fprintln(stderr, "lab replay: --kind: "+err.Error())
		return 2
	}
	if f.repeat < 1 || f.repeat > 1 && (f.mutate > 0 || f.json || f.junit != "" || f.transcript != "") {
		fmt.Fprintln(stderr, "lab replay: "+sayRepeatN.F())
		return 2
	}
	lessons, unloaded, code := replayLessons(g, args, f.all, stderr)
	if lessons == nil {
		return code
	}
	var mutants []mutation.Mutant
	var judges [][]int // the mutants each lesson replayed judges
	if f.mutate > 0 {
		mutants, judges, lessons = replayMutants(lessons, f, kinds, stderr)
	}
	svc, code := connect(ctx, g, stderr, true)
	if svc == nil {
		return code
	}
	defer svc.Close()
	queues := broker.NewReader(svc)
	env := &steps.Env{Svc: svc, Binary: binary(), Replay: true, Queues: queues.Read}
	// own is the lane's services under the logins a participant would
	// have; a lane whose logins could not be made runs nothing.
	own := func(ls *services.Services) (*services.Services, func()) { return ls, func() {} }
	var ownFailed atomic.Int32
	if f.asParticipant {
		var forget func()
		if own, forget, code = participantLogins(ctx, svc, env, &ownFailed, stderr); own == nil {
			return code
		}
		defer forget()
	}
	closers := sync.Map{} // a lane's Env → what closes its logins
	parallel := f.parallel
	if parallel == 0 {
		parallel = defaultParallel(ctx, svc)
	}
	var judged = map[mutation.Verdict]int{}
	var finished func(int, replay.LessonReport)
	if mutants != nil {
		finished = func(i int, lr replay.LessonReport) {
			for _, k := range judges[i] {
				v, why := mutants[k].Judge(lr)
				judged[v]++
				line := fmt.Sprintf("%-8s %s", v, mutants[k])
				if v != mutation.Killed {
					line += "\n         " + why
				}
				fmt.Fprintln(stderr, line)
			}
		}
	}
	opts := replay.Options{
		Progress: func(line string) { fmt.Fprintln(stderr, line) },
		Finished: finished,
		Caps:     svc.Info.Caps(),
		Parallel: parallel,
		Lang:     g.lang,
		Lane: func(i int) *steps.Env {
			ls := svc.Lane(i)
			q := queues.For(ls.Names).Read
			ls, done := own(ls)
			if f.asParticipant {
				q = broker.NewReader(ls).Read
			}
			e := &steps.Env{Svc: ls, Binary: env.Binary, Replay: true, Queues: q}
			closers.Store(e, done)
			return e
		},
		Done: func(lane *steps.Env) {
			if done, ok := closers.LoadAndDelete(lane); ok {
				done.(func())()
			}
			dropLane(ctx, g, svc.For(lane.Svc.Names.NS), stderr) // the lab's logins: a participant's cannot drop its own user
		},
	}
	if f.repeat > 1 {
		return replayRepeated(ctx, env, lessons, opts, f.repeat, g.lang, stderr)
	}
	rep := replay.Run(ctx, env, lessons, opts)
	switch {
	case mutants != nil:
		fmt.Fprintln(stderr, sayMutantsJudged.F(judged[mutation.Killed], judged[mutation.Survived], judged[mutation.Broken]))
		if ctx.Err() != nil {
			return 130
		}
		if judged[mutation.Killed] != len(mutants) {
			return 1
		}
		return 0
	case ownFailed.Load() > 0:
		fmt.Fprintf(stderr, "lab replay: --as-participant: %d lane(s) got no logins of their own (above)\n", ownFailed.Load())
		return 1
	}
	rep.AddUnloadable(unloaded)
	fmt.Fprintln(stderr, rep.SummaryIn(g.lang))
	if code := writeReplayReports(&rep, f, stdout, stderr); code != 0 {
		return code
	}
	if ctx.Err() != nil {
		return 130
	}
	if rep.Failed > 0 {
		return 1
	}
	if rep.Skipped > 0 && f.strict {
		fmt.Fprintf(stderr, "lab replay: --strict: %d lesson(s) skipped checks, which counts as a failure here\n", rep.Skipped)
		return 1
	}
	return 0
}

// replayLessons are the lessons args name (ids and .md files), or every
// lesson with all, and with all the files that did not load; nil lessons
// and the exit code when there is nothing to replay.
func replayLessons(g globals, args []string, all bool, stderr io.Writer) ([]*lab.Lesson, labs.FileErrors, int) {
	var lessons []*lab.Lesson
	var ids []string
	for _, a := range args {
		if strings.HasSuffix(a, ".md") {
			l, err := labs.LoadFile(a)
			if err != nil {
				printErr(stderr, err)
				return nil, nil, 1
			}
			lessons = append(lessons, l)
		} else {
			ids = append(ids, a)
		}
	}
	if len(ids) == 0 && !all && len(lessons) > 0 {
		return lessons, nil, 0
	}
	if len(ids) == 0 && !all {
		fmt.Fprintln(stderr, "lab replay: "+sayReplayWhat.F())
		return nil, nil, 2
	}
	ls, err := loadLessons(g)
	unloaded := partialLoad(err)
	if err != nil {
		printErr(stderr, err)
		if unloaded == nil {
			return nil, nil, 1
		}
	}
	if !all {
		unloaded = nil // only --all asked for those files
	} else {
		lessons = append(lessons, ls...)
	}
	for _, id := range ids {
		l := labs.Find(ls, id)
		if l == nil {
			fmt.Fprintf(stderr, "lab replay: %s\n", sayReplayNoLesson.F(id))
			if err != nil {
				fmt.Fprintln(stderr, "lab replay: "+sayNotLoaded.F())
			}
			return nil, nil, 2
		}
		lessons = append(lessons, l)
	}
	return lessons, unloaded, 0
}

// replayMutants draws f.mutate mutants of each lesson (--seed, or one from
// the clock, printed) and returns them with the lessons to replay: theirs.
func replayMutants(lessons []*lab.Lesson, f replayFlags, kinds []mutation.Kind, stderr io.Writer) ([]mutation.Mutant, [][]int, []*lab.Lesson) {
	seed := f.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano()) % 1_000_000
	}
	var all []mutation.Mutant
	for _, l := range lessons {
		all = append(all, mutation.Of(l)...)
	}
	mutants := mutation.Sample(all, f.mutate, seed, kinds)
	fmt.Fprintln(stderr, "lab replay: "+sayMutantsDrawn.F(len(mutants), len(all), len(lessons), f.mutate, seed))
	// Answer-replaced mutants of one path share their replay (one lesson
	// copy): of[i] are the mutants lesson i judges.
	var out []*lab.Lesson
	var of [][]int
	at := map[*lab.Lesson]int{}
	for i, m := range mutants {
		j, ok := at[m.Lesson]
		if !ok {
			j = len(out)
			at[m.Lesson] = j
			out = append(out, m.Lesson)
			of = append(of, nil)
		}
		of[j] = append(of[j], i)
	}
	return mutants, of, out
}

// participantLogins points env at a participant's logins (--as-participant)
// and returns how each lane gets its own, and what removes them at the end;
// a nil own and the exit code where the lab cannot make them. A lane whose
// logins fail counts in failed and runs nothing.
func participantLogins(ctx context.Context, svc *services.Services, env *steps.Env, failed *atomic.Int32, stderr io.Writer) (
	own func(*services.Services) (*services.Services, func()), forget func(), code int) {
	logins := workshop.ProbeLogins(ctx, svc)
	if why := logins.Shared(); len(why) > 0 {
		fmt.Fprintf(stderr, "lab replay: --as-participant: the lab cannot make a participant's logins here:\n  %s\n", strings.Join(why, "\n  "))
		return nil, nil, 2
	}
	own = func(ls *services.Services) (*services.Services, func()) {
		o, done, err := logins.Own(ctx, ls, ls.Names.NS)
		if err != nil {
			failed.Add(1)
			fmt.Fprintf(stderr, "lab replay: --as-participant: namespace %s: %v\n", ls.Names.NS, err)
			o, done = ls.For(ls.Names.NS), func() {}
			o.Info.MySQLErr, o.Info.AMQPErr = err, err
		}
		return o, done
	}
	var done func()
	env.Svc, done = own(svc)
	env.Queues = broker.NewReader(env.Svc).Read
	fmt.Fprintln(stderr, "lab replay: as a workshop participant: "+strings.Join(logins.Describe(), "; "))
	forget = func() {
		done()
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := logins.Forget(c, svc, svc.Names.NS); err != nil {
			fmt.Fprintf(stderr, "lab replay: --as-participant: the logins of namespace %q are left (lab clean removes them): %v\n", svc.Names.NS, err)
		}
	}
	return own, forget, 0
}

// writeReplayReports writes --json to stdout and the --junit and
// --transcript files; 1 when one could not be written.
func writeReplayReports(rep *replay.Report, f replayFlags, stdout, stderr io.Writer) int {
	if f.json {
		if err := printJSON(stdout, rep); err != nil {
			fmt.Fprintln(stderr, "lab replay:", err)
			return 1
		}
	}
	for _, out := range []struct {
		path  string
		write func(io.Writer) error
	}{{f.junit, rep.WriteJUnit}, {f.transcript, rep.WriteTranscript}} {
		if out.path == "" {
			continue
		}
		file, err := os.Create(out.path)
		if err == nil {
			err = out.write(file)
			if cerr := file.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "lab replay: write %s: %v\n", out.path, err)
			return 1
		}
	}
	return 0
}

// dropLane removes what a lesson left in its replay lane (NS_rK): no
// learner can open a lane, so nothing there is worth keeping, and a lane
// left behind is two databases, queues and keys per lesson per run. What
// cannot be removed is said on stderr; the replay's verdict stands.
func dropLane(ctx context.Context, g globals, lane *services.Services, stderr io.Writer) {
	if !services.IsLaneNamespace(lane.Names.NS) {
		return
	}
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	var out strings.Builder
	cl := cleaner.New(c, lane, labs.BrokerNames(g.lessons), &out)
	defer cl.Close()
	cl.Namespace(c, lane.Names)
	if cl.Failed() {
		fmt.Fprintf(stderr, "lab replay: replay lane %s was not removed completely (`lab clean` with the replay's --namespace removes its lanes later):\n%s", lane.Names.NS, out.String())
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/replay"
	"github.com/rmlab/lab/steps"
)

// repeatTally is one lesson over every round of --repeat.
type repeatTally struct {
	lesson       *lab.Lesson
	failed, skip int
	slowest      time.Duration
	first        string // the first failure: round, file:line, why
}

// replayRepeated replays lessons n times over, each round as one lab replay
// (the same parallelism, lanes and cleanup), and ends with each lesson's
// failures of n: how a flake is measured, not guessed. Exit 1 when any
// round failed a lesson.
func replayRepeated(ctx context.Context, env *steps.Env, lessons []*lab.Lesson, opts replay.Options, n int, lang string, stderr io.Writer) int {
	tally := make([]repeatTally, len(lessons))
	for i, l := range lessons {
		tally[i].lesson = l
	}
	start := time.Now()
	for round := 1; round <= n && ctx.Err() == nil; round++ {
		t0 := time.Now()
		fmt.Fprintf(stderr, say(lang, "lab replay: round %d of %d\n", "lab replay：第 %d 轮，共 %d 轮\n"), round, n)
		rep := replay.Run(ctx, env, lessons, opts)
		for i, lr := range rep.Lessons {
			if i >= len(tally) {
				break
			}
			t := &tally[i]
			t.slowest = max(t.slowest, time.Duration(lr.DurationMS)*time.Millisecond)
			switch {
			case lr.Skipped:
				t.skip++
			case !lr.Passed:
				t.failed++
				if t.first == "" {
					t.first = fmt.Sprintf("round %d: %s", round, firstFailure(lr))
				}
			}
		}
		fmt.Fprintf(stderr, say(lang, "lab replay: round %d: %d passed, %d failed, %d skipped in %s\n", "lab replay：第 %d 轮：%d 课通过，%d 课失败，%d 课跳过，用时 %s\n"),
			round, rep.Passed, rep.Failed, rep.Skipped, time.Since(t0).Round(100*time.Millisecond))
	}
	if ctx.Err() != nil {
		return 130
	}
	fmt.Fprintf(stderr, say(lang, "\nfailures of %d runs per lesson (%s in all):\n", "\n每课 %d 次中的失败次数（共用时 %s）：\n"), n, time.Since(start).Round(time.Second))
	failed, runs := 0, 0
	for _, t := range tally {
		line := fmt.Sprintf("  %2d %-34s %d/%d", t.lesson.Number, t.lesson.ID, t.failed, n)
		if t.skip > 0 {
			line += fmt.Sprintf(say(lang, "  (%d skipped)", "  （%d 次跳过）"), t.skip)
		}
		line += fmt.Sprintf(say(lang, "  slowest %s", "  最慢 %s"), t.slowest.Round(100*time.Millisecond))
		if t.first != "" {
			line += "\n       " + t.first
		}
		fmt.Fprintln(stderr, line)
		failed += t.failed
		runs += n
	}
	fmt.Fprintf(stderr, say(lang, "%d failures of %d lesson runs\n", "%d 次失败，共 %d 次课程运行\n"), failed, runs)
	if failed > 0 {
		return 1
	}
	return 0
}

// firstFailure is where and why a lesson failed: its first failed step.
func firstFailure(lr replay.LessonReport) string {
	for _, st := range lr.Steps {
		if !st.Passed && !st.Skipped {
			return fmt.Sprintf("%s:%d %s: %s", lr.File, st.Line, st.Kind, oneLineOf(st.Why, st.Observed))
		}
	}
	return oneLineOf(lr.Why, "failed")
}

func oneLineOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			line, rest, _ := strings.Cut(v, "\n")
			if rest != "" {
				line += " …"
			}
			return plain.Cut(line, 300)
		}
	}
	return ""
}

func say(lang, en, zh string) string {
	if lang == "zh" {
		return zh
	}
	return en
}

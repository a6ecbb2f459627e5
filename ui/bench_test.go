package ui

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/worker"
)

// fullTables is two tables of n rows each.
func fullTables(n, salt int) []tableData {
	pa := tableData{title: "points_account", db: "blog_idempotency_lab_uitest", cols: []string{"user_id", "points"}}
	co := tableData{title: "consumed_operation", db: "blog_idempotency_lab_uitest",
		cols: []string{"consumer_name", "business_key", "event_id", "user_id", "amount"}}
	for i := 0; i < n; i++ {
		pa.rows = append(pa.rows, []string{strconv.Itoa(i), strconv.Itoa((i + salt) % 7 * 10)})
		co.rows = append(co.rows, []string{"points-award", fmt.Sprintf("order:%d:paid", i), fmt.Sprintf("event-%03d", i+salt%2), strconv.Itoa(i), "10"})
	}
	return []tableData{pa, co}
}

// benchFrames measures Update + View per frame with every panel full: each
// frame delivers a table poll that changed rows, a worker poll and a
// spinner-free redraw, as an idle-but-live screen does every 500 ms.
func benchFrames(b *testing.B, w, h int) {
	a := newTestApp(b, fakeEnv(), "en", "fixture-basics", w, h)
	fill(b, a)
	tp := a.panels.tables
	tp.data = fullTables(200, 0)
	tp.MarkStep()
	statuses := []worker.Status{
		{Name: "c1", Kind: "consumer", PID: 4242, State: worker.Paused, Point: "after-mark-commit", Log: []string{"@pause after-mark-commit"}},
		{Name: "c2", Kind: "consumer", PID: 4243, State: worker.Killed, Point: "before-points"},
		{Name: "relay-A", Kind: "relay", PID: 4250, State: worker.Running},
		{Name: "relay-B", Kind: "relay", PID: 4251, State: worker.Exited, ExitCode: 1},
	}
	frames := [2][]tableData{fullTables(200, 1), fullTables(200, 2)}
	a.panels.queues.stats = append(a.panels.queues.stats, lab.QueueStat{Name: "orders.dlq_uitest", Exists: true, Unacked: -1})
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		a.Update(tablesDataMsg{gen: tp.gen, tables: frames[i%2]})
		a.Update(workersDataMsg{gen: a.panels.workers.gen, statuses: statuses, sessions: map[string]bool{"B": true}})
		_ = a.View()
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	q := func(p float64) float64 { return float64(durs[int(float64(len(durs)-1)*p)].Microseconds()) / 1000 }
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// BenchmarkFrame200x60 is the frame cost on a wide screen: list, lesson
// and the four panels stacked, 200-row tables. Target p99 < 10 ms.
func BenchmarkFrame200x60(b *testing.B) { benchFrames(b, 200, 60) }

// BenchmarkFrame80x24 is the same on the smallest supported screen.
func BenchmarkFrame80x24(b *testing.B) { benchFrames(b, 80, 24) }

// BenchmarkIdleCPUOnALesson measures the lab's CPU while it sits on a
// lesson with every panel polling real MariaDB (target < 2% of one core),
// reported as idle-cpu-%: a measure, so a benchmark (it used to be a test
// that always skipped). It runs the real program for LAB_IDLE_SECONDS
// (default 10) per iteration:
//
//	go test ./ui -run '^$' -bench IdleCPU -benchtime 1x
//
// The same on the real binary in a real terminal (CPU ticks over 30 s,
// rather than ps's lifetime average):
//
//	go build -o /tmp/lab-ui ./cmd/lab
//	tmux new-session -d -s idle -x 200 -y 60 'LAB_PROGRESS_FILE=/tmp/p.json /tmp/lab-ui --namespace uitest'
//	tmux send-keys -t idle Enter; sleep 1; tmux send-keys -t idle Enter   # reset, first processing
//	PID=$(pgrep -f '^/tmp/lab-ui --namespace uitest')
//	a=$(awk '{print $14+$15}' /proc/$PID/stat); sleep 30; b=$(awk '{print $14+$15}' /proc/$PID/stat)
//	echo "scale=2; 100*($b-$a)/$(getconf CLK_TCK)/30" | bc   # percent of one core
//	ps -o %cpu= -p $PID; tmux kill-session -t idle
func BenchmarkIdleCPUOnALesson(b *testing.B) {
	var pct float64
	for range b.N {
		pct = idleCPU(b)
	}
	b.ReportMetric(pct, "idle-cpu-%")
	b.ReportMetric(0, "ns/op")
}

func idleCPU(t testing.TB) float64 {
	secs := 10
	if s, err := strconv.Atoi(os.Getenv("LAB_IDLE_SECONDS")); err == nil && s > 0 {
		secs = s
	}
	env := realEnv(t)
	setEnv(t, progress.Env, t.TempDir()+"/progress.json")
	a, err := newApp(context.Background(), Options{Env: env, Lang: "en", Start: "idem-first-processing",
		LessonsDir: lessonCopy(t, "01-idem-first-processing.md")})
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{wake: make(chan struct{}, 1)}
	a.observe = w.observe
	tm := teatest.NewTestModel(t, a, teatest.WithInitialTermSize(200, 60),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.TrueColor)))
	w.until(t, "the lesson", 5*time.Second, func(s snap) bool { return s.lesson != "" && !s.running })
	for i := 0; i < 3; i++ { // reset and two steps: tables have rows
		prev := w.last.next
		tm.Send(keyMsg("enter"))
		w.until(t, "a step", 30*time.Second, func(s snap) bool { return !s.running && s.next > prev })
	}
	a.observe = nil
	time.Sleep(time.Second)
	cpu0, wall0 := cpuTime(), time.Now()
	time.Sleep(time.Duration(secs) * time.Second)
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	pct := 100 * cpu.Seconds() / wall.Seconds()
	t.Logf("idle CPU over %s: %s = %.2f%% of one core (whole test process: program, pollers, MySQL client)", wall.Round(time.Millisecond), cpu, pct)
	tm.Send(keyMsg("q"))
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	a.shutdown()
	return pct
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

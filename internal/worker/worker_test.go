package worker

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the worker: with LAB_WORKER_TEST_CHILD set it
// runs `worker KIND ...` like the lab binary would.
func TestMain(m *testing.M) {
	Register("steps", func(ctx context.Context, p *Parent, args []string) error {
		for _, pt := range []string{"first", "second", "third"} {
			if err := p.Reach(ctx, pt); err != nil {
				return err
			}
			p.Logf("did %s", pt)
		}
		return nil
	}, []string{"a", "b", "c"})
	// ticks reaches "tick" and notes its count until stopped.
	Register("ticks", func(ctx context.Context, p *Parent, args []string) error {
		for i := 1; ctx.Err() == nil; i++ {
			if err := p.Reach(ctx, "tick"); err != nil {
				return err
			}
			p.Note("tick", fmt.Sprint(i))
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	}, []string{"tick"})
	// env says the DSN it was given (reversed: not the text a test looks
	// for in /proc) and waits to be killed.
	Register("env", func(ctx context.Context, p *Parent, args []string) error {
		p.Logf("dsn %s", reverse(os.Getenv("LAB_MYSQL_DSN")))
		if err := p.Reach(ctx, "read"); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	}, []string{"read"})
	if os.Getenv("LAB_WORKER_TEST_CHILD") == "1" {
		os.Exit(RunChild(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func start(t *testing.T, pause ...string) *Process {
	t.Helper()
	exe, _ := os.Executable()
	p, err := Start(Spec{Binary: exe, Kind: "steps", Name: "w", PauseAt: pause, Env: []string{"LAB_WORKER_TEST_CHILD=1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	return p
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestWorkerPausesAtTheNamedPointAndDiesThereOnKill(t *testing.T) {
	p := start(t, "second")
	if err := p.WaitPaused(ctx(t), "second"); err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	st := p.Status()
	if st.State != Killed || st.Point != "second" {
		t.Fatalf("status %+v", st)
	}
	// Not only the state the lab set: the process ended by SIGKILL and is
	// gone.
	if ws, ok := p.proc.(local).cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the process ended with %v, not SIGKILL", p.proc.(local).cmd.ProcessState)
	}
	if err := syscall.Kill(st.PID, 0); err == nil {
		t.Fatalf("pid %d still exists after the kill", st.PID)
	}
	for _, l := range p.Output() {
		if l == "did second" {
			t.Fatal("the worker went past the point it was killed at")
		}
	}
}

func TestResumedWorkerRunsToTheEnd(t *testing.T) {
	p := start(t, "first")
	if err := p.WaitPaused(ctx(t), "first"); err != nil {
		t.Fatal(err)
	}
	if err := p.Continue(); err != nil {
		t.Fatal(err)
	}
	code, err := p.WaitExit(ctx(t))
	if err != nil || code != 0 {
		t.Fatalf("exit %d, %v", code, err)
	}
	if got := p.Output(); len(got) != 3 || !strings.HasSuffix(got[2], " did third") || !strings.HasPrefix(got[2], "+0.") {
		t.Fatalf("output %q", got)
	}
}

func TestWorkerExitsWhenItsParentGoesAway(t *testing.T) {
	p := start(t, "first")
	if err := p.WaitPaused(ctx(t), "first"); err != nil {
		t.Fatal(err)
	}
	p.stdin.Close() // what the kernel does to the pipe when the lab dies
	code, err := p.WaitExit(ctx(t))
	if err != nil || code != 3 {
		t.Fatalf("exit %d, %v; want 3 from the stdin watcher", code, err)
	}
}

func TestGroupKillAllLeavesNoWorkerRunning(t *testing.T) {
	var g Group
	for i := 0; i < 3; i++ {
		p := start(t, "first")
		g.Add(p)
	}
	procs := append([]*Process(nil), g.procs...)
	for _, p := range procs {
		if err := p.WaitPaused(ctx(t), "first"); err != nil {
			t.Fatal(err)
		}
	}
	g.KillAll()
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			t.Fatalf("worker %d still running", p.Status().PID)
		}
	}
}

func TestARunningWorkerArmedAtAPointPausesThereOnceAndItsNotesReachTheParentInOrder(t *testing.T) {
	exe, _ := os.Executable()
	var mu sync.Mutex
	var notes []int
	p, err := Start(Spec{Binary: exe, Kind: "ticks", Name: "w", Env: []string{"LAB_WORKER_TEST_CHILD=1"},
		OnNote: func(kind, id string) {
			n, _ := strconv.Atoi(id)
			mu.Lock()
			notes = append(notes, n)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	if err := p.WaitReached(ctx(t), "tick", 3); err != nil {
		t.Fatal(err)
	}
	if err := p.Arm("tick"); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitPaused(ctx(t), "tick"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	atPause := len(notes)
	mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	if len(notes) != atPause {
		t.Errorf("the paused worker went on: %d notes at the pause, %d after 100 ms", atPause, len(notes))
	}
	mu.Unlock()
	if err := p.Continue(); err != nil {
		t.Fatal(err)
	}
	// Armed once: it does not pause at the next tick.
	if err := p.WaitReached(ctx(t), "tick", atPause+5); err != nil {
		t.Fatal(err)
	}
	if st := p.Status(); st.State != Running {
		t.Fatalf("after continue the worker is %s, want running (an armed pause is one-shot)", st.State)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) < 5 {
		t.Fatalf("%d notes, want at least 5", len(notes))
	}
	for i, n := range notes {
		if n != i+1 {
			t.Fatalf("notes %v: note %d is %d, want them in order from 1", notes, i, n)
		}
	}
	for _, l := range p.Output() {
		if strings.Contains(l, "@note") {
			t.Fatalf("a note reached the learner's log: %q", l)
		}
	}
}

// A failed wait quotes what the worker last said, its last non-blank
// lines, never an empty "last output:".
func TestAFailedWaitQuotesTheWorkersLastLines(t *testing.T) {
	if got := lastLine([]string{"connected", "fatal: no such queue", "", "  "}); got != "connected | fatal: no such queue" {
		t.Errorf("lastLine = %q", got)
	}
	if got := lastLine([]string{"", ""}); got != "(none)" {
		t.Errorf("lastLine of blank lines = %q", got)
	}
}

func TestOutputLinesCarryTheTimeSinceTheWorkerStarted(t *testing.T) {
	for d, want := range map[time.Duration]string{
		210 * time.Millisecond: "+0.21s", 5010 * time.Millisecond: "+5.01s", 12340 * time.Millisecond: "+12.3s", 125 * time.Second: "+125s",
	} {
		if got := Stamp(d); got != want {
			t.Errorf("Stamp(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestAKillOfAProgramOfTheLearnersReachesTheChildrenItStarted(t *testing.T) {
	// sh starts a sleep and waits: killing only sh would leave the sleep,
	// as killing only `go run` leaves the program it built.
	p, err := Start(Spec{Name: "own", Command: []string{"sh", "-c", "sleep 300 & echo child $!; wait"}})
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for i := 0; i < 100 && child == 0; i++ {
		for _, l := range p.Output() {
			fmt.Sscanf(l[strings.Index(l, " ")+1:], "child %d", &child)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if child == 0 {
		t.Fatalf("no child pid in %q", p.Output())
	}
	if err := p.Arm("after-commit"); err == nil {
		t.Error("Arm of a program of its own did not say it has no points")
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	// A zombie (dead, not yet reaped by whoever inherited it) is gone.
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child)); err == nil && !strings.Contains(string(st), ") Z ") {
		syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("the program's child %d outlived the kill", child)
	}
}

// A worker of the lab's gets the logins it is given, and no process of the
// same user reads them in its environment or arguments; a learner's
// program gets none of the lab's.
func TestAWorkersLoginsReachItButNotItsEnvironmentOrArguments(t *testing.T) {
	dsn := "root:pipe-secret-" + strconv.Itoa(os.Getpid()) + "@tcp(127.0.0.1:3306)/"
	exe, _ := os.Executable()
	p, err := Start(Spec{Binary: exe, Kind: "env", Name: "w", Env: []string{"LAB_WORKER_TEST_CHILD=1", "LAB_MYSQL_DSN=" + dsn}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	if err := p.WaitReached(ctx(t), "read", 1); err != nil {
		t.Fatal(err)
	}
	if log := strings.Join(p.Output(), "\n"); !strings.Contains(log, "dsn "+reverse(dsn)) {
		t.Fatalf("the worker did not get its DSN: %s", log)
	}
	for _, f := range []string{"environ", "cmdline"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", p.PID(), f))
		if err != nil {
			t.Skipf("no /proc here: %v", err)
		}
		if strings.Contains(string(b), "pipe-secret") {
			t.Fatalf("/proc/PID/%s of a worker holds its DSN: %q", f, b)
		}
	}
	os.Setenv("LAB_MYSQL_DSN", dsn)
	defer os.Unsetenv("LAB_MYSQL_DSN")
	own, err := Start(Spec{Command: []string{"sh", "-c", "echo \"dsn=$LAB_MYSQL_DSN own=$LAB_OWN\""}, Name: "own", Env: []string{"LAB_OWN=mine"}})
	if err != nil {
		t.Fatal(err)
	}
	<-own.done
	if log := strings.Join(own.Output(), "\n"); !strings.Contains(log, "dsn= own=mine") {
		t.Fatalf("a learner's program's environment: %s", log)
	}
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

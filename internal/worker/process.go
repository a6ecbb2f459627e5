package worker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rmlab/lab/internal/plain"
)

// State is where a worker process is in its life.
type State string

const (
	Running State = "running"
	Paused  State = "paused"
	Killed  State = "killed"
	Exited  State = "exited"
)

// Status is a snapshot of a process for the screen and the transcript.
type Status struct {
	Name     string
	Kind     string
	PID      int
	State    State
	Point    string // paused at, or killed at, or last point reached
	ExitCode int
	Log      []string // last lines
}

// Process is a worker started by the lab.
type Process struct {
	Name    string
	Kind    string
	PauseAt []string

	proc   proc
	stdin  io.WriteCloser
	onNote func(kind, id string)
	group  bool // a process group of its own: signals go to the whole group
	onLine func(string)

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every state change
	state    State
	point    string
	reached  map[string]int
	exitCode int
	log      []string
	done     chan struct{}
	started  time.Time
}

// Spec says how to start a worker.
type Spec struct {
	Binary  string   // the lab binary
	Kind    string   // consumer, relay, producer, executor
	Name    string   // the lesson's name for it, e.g. "relay-A"
	PauseAt []string // points to pause at
	Args    []string // kind-specific flags
	Env     []string // extra environment (service addresses)
	// OnNote, when set, is called with each "@note KIND ID" line, in order,
	// from the goroutine reading the worker's output.
	OnNote func(kind, id string)
	// Command, when set, is a program the lab did not write (a learner's
	// challenge solution) run instead of the lab's worker: in a process
	// group of its own, so a kill reaches what it started (go run's child),
	// in Dir. It speaks no point protocol: Arm refuses it.
	Command []string
	Dir     string
	// OnLine, when set, is called with each line of output that is not
	// the point protocol's, as it comes.
	OnLine func(line string)
	// Remote, when set with Command, runs the program elsewhere (a
	// participant's machine, through the workshop's door) instead of here.
	Remote Remote
}

// Remote starts a program of the learner's somewhere else: its output as
// it comes, and a handle to signal and wait for it.
type Remote interface {
	Start(name string, env []string) (RemoteProcess, io.Reader, error)
}

// RemoteProcess is a program a Remote started.
type RemoteProcess interface {
	Signal(sig syscall.Signal) error
	Wait() (exitCode int, err error)
	PID() int
}

// proc is a process here or a Remote's.
type proc interface {
	Signal(sig syscall.Signal) error
	Wait() (int, error)
	PID() int
}

// local is a process of this machine; group: signals reach its group.
type local struct {
	cmd   *exec.Cmd
	group bool
}

func (l local) Signal(sig syscall.Signal) error {
	if l.group {
		return syscall.Kill(-l.cmd.Process.Pid, sig)
	}
	return l.cmd.Process.Signal(sig)
}

func (l local) Wait() (int, error) {
	err := l.cmd.Wait()
	return l.cmd.ProcessState.ExitCode(), err
}

func (l local) PID() int {
	if l.cmd.Process == nil {
		return 0
	}
	return l.cmd.Process.Pid
}

// Start runs `Binary worker KIND --name NAME --pause-at ... ARGS`.
func Start(spec Spec) (*Process, error) {
	if spec.Remote != nil {
		rp, out, err := spec.Remote.Start(spec.Name, spec.Env)
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
		p := &Process{Name: spec.Name, Kind: spec.Kind, proc: rp, group: true, onLine: spec.OnLine,
			state: Running, changed: make(chan struct{}), reached: map[string]int{}, done: make(chan struct{}), started: time.Now()}
		go p.read(out)
		return p, nil
	}
	args := []string{"worker", spec.Kind, "--name", spec.Name}
	if len(spec.PauseAt) > 0 {
		args = append(args, "--pause-at", strings.Join(spec.PauseAt, ","))
	}
	args = append(args, spec.Args...)
	cmd := exec.Command(spec.Binary, args...)
	if len(spec.Command) > 0 {
		cmd = exec.Command(spec.Command[0], spec.Command[1:]...)
		cmd.Dir = spec.Dir
	}
	var pipe *os.File
	if len(spec.Command) > 0 {
		// A learner's program: the logins its run made for it (spec.Env),
		// none of the lab's.
		inherited, _ := split(os.Environ())
		cmd.Env = append(inherited, spec.Env...)
	} else {
		plain, secrets := split(append(os.Environ(), spec.Env...))
		var err error
		if pipe, err = secretsPipe(secrets); err != nil {
			return nil, err
		}
		defer pipe.Close() // the child holds its own copy once started
		cmd.ExtraFiles = []*os.File{pipe}
		cmd.Env = append(plain, secretsFD+"=3")
	}
	cmd.SysProcAttr = sysProcAttr(len(spec.Command) > 0)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout // one ordered stream; the protocol ignores non-@ lines
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s (%s): %w", spec.Name, spec.Binary, err)
	}
	p := &Process{Name: spec.Name, Kind: spec.Kind, PauseAt: spec.PauseAt, proc: local{cmd, len(spec.Command) > 0}, stdin: stdin, onNote: spec.OnNote, group: len(spec.Command) > 0, onLine: spec.OnLine,
		state: Running, changed: make(chan struct{}), reached: map[string]int{}, done: make(chan struct{}), started: time.Now()}
	go p.read(out)
	return p, nil
}

// maxOwnLine bounds one line a program of someone else's writes, as the
// lab keeps it (200 of them per process): a longer one is cut, and says so.
const maxOwnLine = 1000

func (p *Process) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if p.group {
			// A program the lab did not write speaks no point protocol:
			// a line of its own that looks like one ("@note applied …")
			// must not forge the lab's history.
			line = plain.Cut(plain.Text(line), maxOwnLine)
			p.mu.Lock()
			if p.onLine != nil {
				p.onLine(line)
			}
			p.log = append(p.log, Stamp(time.Since(p.started))+" "+line)
			if len(p.log) > 200 {
				p.log = p.log[len(p.log)-200:]
			}
			p.notify()
			p.mu.Unlock()
			continue
		}
		if rest, ok := strings.CutPrefix(line, "@note "); ok {
			if p.onNote != nil {
				kind, id, _ := strings.Cut(rest, " ")
				p.onNote(kind, id)
			}
			continue
		}
		p.mu.Lock()
		switch {
		case strings.HasPrefix(line, "@paused "):
			p.point = strings.TrimPrefix(line, "@paused ")
			p.reached[p.point]++
			p.state = Paused
		case strings.HasPrefix(line, "@point "):
			p.point = strings.TrimPrefix(line, "@point ")
			p.reached[p.point]++
		case line == "@done":
		default:
			// The lab's own workers print what they read (a message's
			// body, a row): text from outside the code.
			line = plain.Text(line)
			if p.onLine != nil {
				p.onLine(line)
			}
			p.log = append(p.log, Stamp(time.Since(p.started))+" "+line)
			if len(p.log) > 200 {
				p.log = p.log[len(p.log)-200:]
			}
		}
		p.notify()
		p.mu.Unlock()
	}
	code, err := p.proc.Wait()
	p.mu.Lock()
	if p.state != Killed {
		p.state = Exited
	}
	p.exitCode = code
	if err != nil && p.state == Exited && p.exitCode == 0 {
		p.exitCode = -1
	}
	p.notify()
	p.mu.Unlock()
	close(p.done)
}

// Stamp is how long after its start a worker wrote a line ("+0.21s",
// "+12.3s", "+125s"): a retry 5 s later reads as 5 s later, not as the
// next line.
func Stamp(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 10:
		return fmt.Sprintf("+%.2fs", s)
	case s < 100:
		return fmt.Sprintf("+%.1fs", s)
	}
	return fmt.Sprintf("+%.0fs", s)
}

func (p *Process) notify() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// WaitFor blocks until cond holds on the process state, or ctx ends.
func (p *Process) waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	for {
		p.mu.Lock()
		ok, err := cond()
		ch := p.changed
		p.mu.Unlock()
		if ok || err != nil {
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			st := p.Status()
			return fmt.Errorf("worker %s: gave up waiting for %s (state %s at %q; last output: %s)",
				p.Name, what, st.State, st.Point, lastLine(st.Log))
		}
	}
}

// WaitPaused waits until the worker pauses at point.
func (p *Process) WaitPaused(ctx context.Context, point string) error {
	return p.waitFor(ctx, "pause at "+point, func() (bool, error) {
		if p.state == Paused && p.point == point {
			return true, nil
		}
		if p.state == Exited || p.state == Killed {
			return false, fmt.Errorf("worker %s %s (code %d) before pausing at %s; last output: %s",
				p.Name, p.state, p.exitCode, point, lastLine(p.log))
		}
		return false, nil
	})
}

// WaitReached waits until the worker has passed point n times (paused or not).
func (p *Process) WaitReached(ctx context.Context, point string, n int) error {
	return p.waitFor(ctx, "point "+point, func() (bool, error) {
		if p.reached[point] >= n {
			return true, nil
		}
		if p.state == Exited || p.state == Killed {
			return false, fmt.Errorf("worker %s %s (code %d) before reaching %s; last output: %s", p.Name, p.state, p.exitCode, point, lastLine(p.log))
		}
		return false, nil
	})
}

// WaitStopped waits until a running worker pauses again or ends.
func (p *Process) WaitStopped(ctx context.Context) error {
	return p.waitFor(ctx, "a pause or the end", func() (bool, error) {
		return p.state == Paused || p.state == Exited || p.state == Killed, nil
	})
}

// WaitExit waits for the process to end and returns its exit code.
func (p *Process) WaitExit(ctx context.Context) (int, error) {
	select {
	case <-p.done:
		st := p.Status()
		return st.ExitCode, nil
	case <-ctx.Done():
		return 0, fmt.Errorf("worker %s still running: %w", p.Name, ctx.Err())
	}
}

// Continue lets a paused worker go on.
func (p *Process) Continue() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != Paused {
		return fmt.Errorf("worker %s is %s, not paused", p.Name, p.state)
	}
	p.state = Running
	p.notify()
	_, err := io.WriteString(p.stdin, "go\n")
	return err
}

// Arm makes a running worker pause the next time it reaches point, as if
// it had been started with --pause-at point (once). WaitPaused then waits
// for it.
func (p *Process) Arm(point string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state == Exited || p.state == Killed {
		return fmt.Errorf("worker %s is %s", p.Name, p.state)
	}
	if p.group {
		return fmt.Errorf("%s is a program of its own: it has no named points to pause at", p.Name)
	}
	_, err := io.WriteString(p.stdin, "pause "+point+"\n")
	return err
}

// PID is the worker's process id.
func (p *Process) PID() int { return p.proc.PID() }

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Kill sends SIGKILL — a real process death, no cleanup code runs — and
// waits until the process is gone.
func (p *Process) Kill() error {
	p.mu.Lock()
	if p.state == Exited || p.state == Killed {
		p.mu.Unlock()
		return nil
	}
	p.state = Killed
	p.notify()
	p.mu.Unlock()
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("worker %s did not die within 5s of SIGKILL", p.Name)
	}
	return nil
}

// Terminate asks for a graceful stop (SIGTERM) and waits up to d, then kills.
func (p *Process) Terminate(d time.Duration) error {
	p.mu.Lock()
	done := p.state == Exited || p.state == Killed
	p.mu.Unlock()
	if done {
		return nil
	}
	_ = p.signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(d):
		return p.Kill()
	}
}

func (p *Process) signal(sig syscall.Signal) error {
	return p.proc.Signal(sig)
}

// Freeze stops the process (SIGSTOP, its whole group for a Command) where
// it is, as a long GC pause or a stalled VM does, until Thaw.
func (p *Process) Freeze() error { return p.signal(syscall.SIGSTOP) }

// Thaw lets a frozen process go on (SIGCONT).
func (p *Process) Thaw() error { return p.signal(syscall.SIGCONT) }

// Status returns a snapshot.
func (p *Process) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{Name: p.Name, Kind: p.Kind, State: p.state, Point: p.point, ExitCode: p.exitCode}
	st.PID = p.proc.PID()
	n := len(p.log)
	if n > 20 {
		n = 20
	}
	st.Log = append([]string(nil), p.log[len(p.log)-n:]...)
	return st
}

// Output returns every log line so far.
func (p *Process) Output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// lastLine is the worker's last three non-blank lines, for a wait that
// failed: what the worker said before it stopped (a blank last line used
// to leave "last output:" empty).
func lastLine(log []string) string {
	var out []string
	for i := len(log) - 1; i >= 0 && len(out) < 3; i-- {
		if l := strings.TrimSpace(log[i]); l != "" {
			out = append([]string{l}, out...)
		}
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, " | ")
}

// Group owns every worker a lesson started, so they can all be killed when
// the lesson resets or the lab exits.
type Group struct {
	mu    sync.Mutex
	procs []*Process
}

// Add records p.
func (g *Group) Add(p *Process) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.procs = append(g.procs, p)
}

// Replace records p in place of the process of the same name (one that
// died and is started again, as a supervisor does), or adds it: the group
// shows each name once, with its current process.
func (g *Group) Replace(p *Process) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, q := range g.procs {
		if q.Name == p.Name {
			g.procs[i] = p
			return
		}
	}
	g.procs = append(g.procs, p)
}

// Get finds a live-or-dead worker by name (the newest with that name).
func (g *Group) Get(name string) *Process {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := len(g.procs) - 1; i >= 0; i-- {
		if g.procs[i].Name == name {
			return g.procs[i]
		}
	}
	return nil
}

// Statuses snapshots every worker.
func (g *Group) Statuses() []Status {
	g.mu.Lock()
	procs := append([]*Process(nil), g.procs...)
	g.mu.Unlock()
	out := make([]Status, 0, len(procs))
	for _, p := range procs {
		out = append(out, p.Status())
	}
	return out
}

// Live counts the workers still running or paused.
func (g *Group) Live() int {
	n := 0
	for _, st := range g.Statuses() {
		if st.State == Running || st.State == Paused {
			n++
		}
	}
	return n
}

// KillAll SIGKILLs every worker still alive and forgets them all.
func (g *Group) KillAll() {
	g.mu.Lock()
	procs := g.procs
	g.procs = nil
	g.mu.Unlock()
	for _, p := range procs {
		_ = p.Kill()
	}
}

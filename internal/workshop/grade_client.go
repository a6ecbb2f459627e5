package workshop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/worker"
)

// Agent is a participant's side of a challenge the workshop's server
// grades (grade_wire.go): the participant's own ssh client opens one
// connection to the door (a control master, so that forwards can be added
// to it as the run asks for them), and the agent starts, signals and
// reports on the program's copies as the server says.
type Agent struct {
	SSH       []string // the ssh command: LAB_SSH_COMMAND split on spaces, or ssh
	User      string
	Host      string
	Port      string
	Challenge string
	Args      []string // --seed N [--copies N] [--duration D]
	Command   []string // the program
	Dir       string
	Out, Err  io.Writer
}

// maxLives bounds the copies the server may have running on the
// participant's machine at once: a server is no more trusted than a
// participant.
const maxLives = 8

// Run runs the challenge through the door and returns the exit code the
// server gave (0 passed, 1 not passed, 2 no verdict).
func (a *Agent) Run(ctx context.Context) (int, error) {
	dir, err := os.MkdirTemp("", "lab-ws-")
	if err != nil {
		return 2, err
	}
	defer os.RemoveAll(dir)
	ctl := filepath.Join(dir, "c")
	dest := a.User + "@" + a.Host
	args := append(append([]string{}, a.SSH[1:]...), "-M", "-S", ctl, "-o", "ControlPersist=no", "-p", a.Port, "-o", "RequestTTY=no",
		dest, challengeRun, a.Challenge)
	master := exec.CommandContext(ctx, a.SSH[0], append(args, a.Args...)...)
	in, err := master.StdinPipe()
	if err != nil {
		return 2, err
	}
	out, err := master.StdoutPipe()
	if err != nil {
		return 2, err
	}
	master.Stderr = plainWriter{a.Err}
	if err := master.Start(); err != nil {
		return 2, fmt.Errorf("%s: %w", a.SSH[0], err)
	}
	s := &agentSide{a: a, ctl: ctl, dest: dest, in: in, lives: map[string]*worker.Process{}}
	s.serve(ctx, out)
	err = master.Wait()
	s.stopAll()
	code := master.ProcessState.ExitCode()
	switch {
	case code == 0 || code == 1 || code == 2:
		return code, nil
	case err != nil:
		return 2, fmt.Errorf("%s -p %s %s %s: %w", strings.Join(a.SSH, " "), a.Port, dest, challengeRun, err)
	}
	return 2, nil
}

type agentSide struct {
	a    *Agent
	ctl  string
	dest string

	wmu sync.Mutex
	in  io.WriteCloser

	mu    sync.Mutex
	lives map[string]*worker.Process
}

func (s *agentSide) send(m wire) {
	b, _ := json.Marshal(m)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.in.Write(append(b, '\n'))
}

func (s *agentSide) serve(ctx context.Context, out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		var m wire
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			// Not the wire: an older server's plain words, say.
			fmt.Fprintln(s.a.Out, plain.Line(sc.Text(), 400))
			continue
		}
		switch m.Op {
		case opSay:
			fmt.Fprintln(s.a.Out, plain.Line(m.Text, 2000))
		case opForward:
			go s.forward(ctx, m.Target)
		case opStart:
			s.start(m)
		case opSignal:
			s.signal(m)
		case opEnd:
			s.in.Close()
		}
	}
}

// forward adds a forward of target to the master connection, on a free
// port of this machine's loopback.
func (s *agentSide) forward(ctx context.Context, target string) {
	reply := wire{Op: opForwarded, Target: target}
	h, p, err := net.SplitHostPort(target)
	if err != nil || strings.ContainsAny(h, " \t\n'\"") || p == "" {
		reply.Error = "not an address: " + plain.Line(target, 64)
		s.send(reply)
		return
	}
	local, err := freeLoopback()
	if err == nil {
		// The master may still be logging in when the first forward is
		// asked for: its control socket is there once it has.
		for try := 0; ; try++ {
			cmd := exec.CommandContext(ctx, s.a.SSH[0], append(append([]string{}, s.a.SSH[1:]...), "-S", s.ctl, "-O", "forward",
				"-L", local+":"+target, "-p", s.a.Port, s.dest)...)
			var b []byte
			if b, err = cmd.CombinedOutput(); err == nil {
				break
			}
			err = fmt.Errorf("ssh -O forward: %v: %s", err, plain.Line(string(b), 200))
			if try == 20 || ctx.Err() != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if err != nil {
		reply.Error = err.Error()
	} else {
		reply.Local = local
	}
	s.send(reply)
}

func freeLoopback() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (s *agentSide) start(m wire) {
	reply := wire{Op: opStarted, Copy: m.Copy, Life: m.Life}
	k := lifeKey(m.Copy, m.Life)
	// Only the contract's variables, from a server no more trusted than
	// anyone: never PATH, LD_PRELOAD or the like.
	var env []string
	for _, kv := range m.Env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, "LAB_") && !strings.ContainsAny(kv, "\x00\n") && len(v) < 4096 {
			env = append(env, kv)
		}
	}
	s.mu.Lock()
	alive := 0
	for _, p := range s.lives {
		if p.Status().State == worker.Running || p.Status().State == worker.Paused {
			alive++
		}
	}
	s.mu.Unlock()
	if alive >= maxLives {
		reply.Error = fmt.Sprintf("%d copies are running here already", alive)
		s.send(reply)
		return
	}
	copy, life := plain.Line(m.Copy, 32), m.Life
	p, err := worker.Start(worker.Spec{Command: s.a.Command, Dir: s.a.Dir, Env: env, Name: copy,
		OnLine: func(line string) { s.send(wire{Op: opLine, Copy: copy, Life: life, Text: line}) }})
	if err != nil {
		reply.Error = err.Error()
		s.send(reply)
		return
	}
	s.mu.Lock()
	s.lives[k] = p
	s.mu.Unlock()
	reply.PID = p.PID()
	s.send(reply)
	go func() {
		<-p.Done()
		s.send(wire{Op: opExit, Copy: copy, Life: life, Code: p.Status().ExitCode})
	}()
}

func (s *agentSide) signal(m wire) {
	s.mu.Lock()
	p := s.lives[lifeKey(m.Copy, m.Life)]
	s.mu.Unlock()
	if p == nil {
		return
	}
	switch m.Signal {
	case "KILL":
		go p.Kill()
	case "TERM":
		go p.Terminate(3 * time.Second)
	case "STOP":
		p.Freeze()
	case "CONT":
		p.Thaw()
	}
}

func (s *agentSide) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.lives {
		p.Kill()
	}
}

// plainWriter passes ssh's own words through without terminal escapes.
type plainWriter struct{ w io.Writer }

func (p plainWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, plain.Text(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

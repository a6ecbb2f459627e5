package workshop

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/worker"
)

// agent is the server's side of a participant's agent (grade_wire.go): a
// worker.Remote whose copies run on the participant's machine.
type agent struct {
	out io.Writer // the session's standard output
	wmu sync.Mutex

	mu      sync.Mutex
	allowed map[string]bool   // addresses the door forwards to for this run
	local   map[string]string // an address of the run's → where the agent listens for it
	waits   map[string]chan wire
	lives   map[string]*life
	next    int
	gone    chan struct{} // the agent's input ended
	goneWhy string
}

func newAgent(in io.Reader, out io.Writer) *agent {
	a := &agent{out: out, allowed: map[string]bool{}, local: map[string]string{}, waits: map[string]chan wire{},
		lives: map[string]*life{}, gone: make(chan struct{})}
	go a.read(in)
	return a
}

func (a *agent) send(m wire) error {
	b, _ := json.Marshal(m)
	a.wmu.Lock()
	defer a.wmu.Unlock()
	_, err := a.out.Write(append(b, '\n'))
	return err
}

// say writes a line to the participant's terminal.
func (a *agent) say(format string, args ...any) {
	a.send(wire{Op: opSay, Text: fmt.Sprintf(format, args...)})
}

// allows reports whether the door may forward to dest for this run.
func (a *agent) allows(dest string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.allowed[dest]
}

// read takes the agent's messages until its input ends or it sends more
// than a run may.
func (a *agent) read(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 4096), maxAgentLine)
	n := 0
	why := "the participant's connection ended"
	for sc.Scan() {
		if n++; n > maxAgentLines {
			why = fmt.Sprintf("the agent sent more than %d messages", maxAgentLines)
			break
		}
		var m wire
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			why = "the agent sent something that is not the lab's wire"
			break
		}
		a.take(m)
	}
	if err := sc.Err(); err != nil {
		why = "the agent's message was too long: " + err.Error()
	}
	a.mu.Lock()
	a.goneWhy = why
	lives := a.lives
	a.lives = map[string]*life{}
	a.mu.Unlock()
	close(a.gone)
	for _, l := range lives {
		l.end(-1)
	}
}

func lifeKey(copy string, n int) string { return copy + "/" + strconv.Itoa(n) }

func (a *agent) take(m wire) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch m.Op {
	case opForwarded:
		if ch := a.waits[opForwarded+" "+m.Target]; ch != nil {
			delete(a.waits, opForwarded+" "+m.Target)
			ch <- m
		}
	case opStarted:
		k := lifeKey(m.Copy, m.Life)
		if ch := a.waits[opStarted+" "+k]; ch != nil {
			delete(a.waits, opStarted+" "+k)
			ch <- m
		}
	case opLine:
		if l := a.lives[lifeKey(m.Copy, m.Life)]; l != nil {
			l.line(m.Text)
		}
	case opExit:
		k := lifeKey(m.Copy, m.Life)
		if l := a.lives[k]; l != nil {
			delete(a.lives, k)
			l.end(m.Code)
		}
	}
}

// await sends m and waits for the agent's answer to it.
func (a *agent) await(key string, m wire, d time.Duration) (wire, error) {
	ch := make(chan wire, 1)
	a.mu.Lock()
	a.waits[key] = ch
	a.mu.Unlock()
	if err := a.send(m); err != nil {
		return wire{}, err
	}
	select {
	case r := <-ch:
		if r.Error != "" {
			return r, errors.New("your machine said: " + plain.Line(r.Error, 300))
		}
		return r, nil
	case <-a.gone:
		return wire{}, errors.New(a.why())
	case <-time.After(d):
		a.mu.Lock()
		delete(a.waits, key)
		a.mu.Unlock()
		return wire{}, fmt.Errorf("your machine did not answer %s within %s", m.Op, d)
	}
}

func (a *agent) why() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.goneWhy
}

// forwarded is where the agent listens for target, asking it to forward
// target first (and allowing the door to) the first time.
func (a *agent) forwarded(target string) (string, error) {
	a.mu.Lock()
	if l, ok := a.local[target]; ok {
		a.mu.Unlock()
		return l, nil
	}
	a.allowed[target] = true
	a.mu.Unlock()
	r, err := a.await(opForwarded+" "+target, wire{Op: opForward, Target: target}, 20*time.Second)
	if err != nil {
		return "", fmt.Errorf("forward %s to your machine: %w", target, err)
	}
	h, p, err := net.SplitHostPort(r.Local)
	if port, perr := strconv.Atoi(p); err != nil || net.ParseIP(h) == nil || perr != nil || port < 1 || port > 65535 {
		return "", fmt.Errorf("your machine forwarded %s to %q, not an address", target, plain.Line(r.Local, 64))
	}
	a.mu.Lock()
	a.local[target] = r.Local
	a.mu.Unlock()
	return r.Local, nil
}

// Start starts a life of copy on the participant's machine, with env's
// addresses of the run's replaced by where the agent forwards them.
func (a *agent) Start(copy string, env []string) (worker.RemoteProcess, io.Reader, error) {
	env, err := a.localEnv(env)
	if err != nil {
		return nil, nil, err
	}
	pr, pw := io.Pipe()
	a.mu.Lock()
	a.next++
	l := newLife(a, copy, a.next, pw)
	a.lives[lifeKey(copy, l.n)] = l
	a.mu.Unlock()
	r, err := a.await(opStarted+" "+lifeKey(copy, l.n), wire{Op: opStart, Copy: copy, Life: l.n, Env: env}, 30*time.Second)
	if err != nil {
		a.mu.Lock()
		delete(a.lives, lifeKey(copy, l.n))
		a.mu.Unlock()
		l.end(-1)
		return nil, nil, err
	}
	l.pid = r.PID
	return l, pr, nil
}

// localEnv is env with the run's addresses (the MySQL server, the copy's
// broker proxy, the SMS provider) replaced by the agent's forwards.
func (a *agent) localEnv(env []string) ([]string, error) {
	out := make([]string, 0, len(env))
	var mysqlLocal string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "LAB_MYSQL_DSN":
			dc, err := gomysql.ParseDSN(v)
			if err != nil {
				return nil, err
			}
			if dc.Addr, err = a.forwarded(dc.Addr); err != nil {
				return nil, err
			}
			mysqlLocal = dc.Addr
			kv = k + "=" + dc.FormatDSN()
		case "LAB_AMQP_URL", "LAB_SMS_URL":
			u, err := url.Parse(v)
			if err != nil || u.Host == "" {
				break
			}
			if u.Host, err = a.forwarded(u.Host); err != nil {
				return nil, err
			}
			kv = k + "=" + u.String()
		}
		out = append(out, kv)
	}
	if mysqlLocal != "" {
		h, p, _ := net.SplitHostPort(mysqlLocal)
		for i, kv := range out {
			switch {
			case strings.HasPrefix(kv, "LAB_MYSQL_HOST="):
				out[i] = "LAB_MYSQL_HOST=" + h
			case strings.HasPrefix(kv, "LAB_MYSQL_PORT="):
				out[i] = "LAB_MYSQL_PORT=" + p
			}
		}
	}
	return out, nil
}

// life is one start of a copy on the participant's machine.
type life struct {
	a      *agent
	copy   string
	n      int
	pid    int
	pw     *io.PipeWriter
	exited chan struct{}

	mu     sync.Mutex
	lines  chan string // to the worker's reader, in order; full: dropped
	ended  bool
	code   int
	writer sync.Once
}

func newLife(a *agent, copy string, n int, pw *io.PipeWriter) *life {
	l := &life{a: a, copy: copy, n: n, pw: pw, exited: make(chan struct{}), lines: make(chan string, 256)}
	go func() {
		for t := range l.lines {
			l.pw.Write([]byte(t + "\n"))
		}
		l.pw.Close()
		close(l.exited)
	}()
	return l
}

func (l *life) line(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	select {
	case l.lines <- strings.ReplaceAll(text, "\n", " "):
	default: // the worker's reader keeps the last 200 lines anyway
	}
}

func (l *life) end(code int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.ended, l.code = true, code
		close(l.lines)
	}
}

var signalNames = map[syscall.Signal]string{syscall.SIGKILL: "KILL", syscall.SIGTERM: "TERM", syscall.SIGSTOP: "STOP", syscall.SIGCONT: "CONT"}

// Signal asks the agent to signal the life. A kill the agent has not
// answered with an exit within killGrace ends the life here anyway (the
// run's side of the wire is cut either way: chaos's deadOnTheWire).
func (l *life) Signal(sig syscall.Signal) error {
	name, ok := signalNames[sig]
	if !ok {
		return fmt.Errorf("no signal %v for a program on a participant's machine", sig)
	}
	if sig == syscall.SIGKILL {
		time.AfterFunc(killGrace, func() { l.end(-1) })
	}
	return l.a.send(wire{Op: opSignal, Copy: l.copy, Life: l.n, Signal: name})
}

const killGrace = 4 * time.Second

// Wait is the life's exit code once it ended (-1: the agent went away or
// did not answer a kill).
func (l *life) Wait() (int, error) {
	<-l.exited
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.code, nil
}

func (l *life) PID() int { return l.pid }

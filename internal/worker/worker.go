// Package worker runs the lab's separate OS processes (consumer, relay,
// producer, executor) and lets a lesson pause them at named points and kill
// them there with SIGKILL. The code a worker runs is the same with or without
// a fault: the fault is only where the parent decides to kill it.
//
// The protocol is lines on the child's stdout and stdin:
//
//	child → parent  "@point NAME"    reached NAME and went on
//	child → parent  "@paused NAME"   reached NAME and waits for "go" on stdin
//	child → parent  "@done"          finished normally
//	child → parent  "@note KIND ID"  something happened to ID (committed,
//	                                 published, applied, …): for a caller that
//	                                 counts, such as lab chaos; never shown
//	child → parent  anything else    a log line shown to the learner
//	parent → child  "go"             leave the current pause
//	parent → child  "pause NAME"     pause the next time NAME is reached
//
// When stdin closes (the lab exited or crashed) the child exits at once, and on
// Linux the kernel also kills it when the parent dies (Pdeathsig), so no
// worker outlives the lab.
package worker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/rmlab/lab/internal/secret"
)

// Main is a worker kind's entry point, run inside `lab worker KIND`.
type Main func(ctx context.Context, p *Parent, args []string) error

var (
	regMu    sync.Mutex
	registry = map[string]Main{}
	points   = map[string][]string{}
)

// Register makes a worker kind runnable as `lab worker KIND`, announcing
// the pause points given (--help lists them).
func Register(kind string, m Main, pts []string) {
	regMu.Lock()
	defer regMu.Unlock()
	registry[kind] = m
	points[kind] = pts
}

// PointsOf are the pause points a registered kind announces.
func PointsOf(kind string) []string {
	regMu.Lock()
	defer regMu.Unlock()
	return points[kind]
}

// Lookup returns a registered worker kind.
func Lookup(kind string) (Main, bool) {
	regMu.Lock()
	defer regMu.Unlock()
	m, ok := registry[kind]
	return m, ok
}

// Kinds lists registered worker kinds.
func Kinds() []string {
	regMu.Lock()
	defer regMu.Unlock()
	var out []string
	for k := range registry {
		out = append(out, k)
	}
	return out
}

// Parent is a worker process's whole link to the lab that started it: it
// announces named points and pauses at the ones the parent asked for, and
// carries the log lines and notes the parent reads.
type Parent struct {
	Name  string // the lesson's name for this worker (--name)
	mu    sync.Mutex
	out   io.Writer
	pause map[string]bool
	gocnt chan struct{}

	armMu sync.Mutex
	armed map[string]bool // one-shot pauses the parent asked for while running
}

// NewParent reads commands from in and writes events to out. pauseAt lists
// the points to pause at. On EOF from in, exit is called (os.Exit in a real
// worker) so a worker never outlives the process that started it.
func NewParent(in io.Reader, out io.Writer, pauseAt []string, exit func()) *Parent {
	p := &Parent{out: out, pause: map[string]bool{}, gocnt: make(chan struct{}, 16), armed: map[string]bool{}}
	for _, s := range pauseAt {
		if s = strings.TrimSpace(s); s != "" {
			p.pause[s] = true
		}
	}
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			cmd := strings.TrimSpace(sc.Text())
			switch {
			case cmd == "go":
				p.gocnt <- struct{}{}
			case strings.HasPrefix(cmd, "pause "):
				p.armMu.Lock()
				p.armed[strings.TrimPrefix(cmd, "pause ")] = true
				p.armMu.Unlock()
			}
		}
		exit()
	}()
	return p
}

// Reach announces point name; if the parent asked to pause there, it waits
// until the parent says go (or kills the process, which is the point).
func (p *Parent) Reach(ctx context.Context, name string) error {
	p.armMu.Lock()
	once := p.armed[name]
	delete(p.armed, name)
	p.armMu.Unlock()
	if !p.pause[name] && !once {
		p.line("@point " + name)
		return nil
	}
	p.line("@paused " + name)
	select {
	case <-p.gocnt:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Logf writes a log line the parent shows to the learner, with every
// password the process was given masked (secret.Scrub).
func (p *Parent) Logf(format string, args ...any) {
	s := secret.Scrub(fmt.Sprintf(format, args...))
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "@") {
			l = " " + l // never confused with a protocol line
		}
		p.line(l)
	}
}

// Note tells the parent that something happened to id (kind: committed,
// published, applied, duplicate, …). Nothing shows it to a learner; a
// caller that counts (lab chaos) reads it.
func (p *Parent) Note(kind, id string) {
	if p == nil {
		return
	}
	p.line("@note " + kind + " " + id)
}

// Done tells the parent the worker finished normally.
func (p *Parent) Done() { p.line("@done") }

func (p *Parent) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.out, s)
	if f, ok := p.out.(*os.File); ok {
		f.Sync()
	}
}

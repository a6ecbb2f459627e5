package chaos

import (
	"fmt"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/worker"
)

// member is one supervised worker: it is started again whenever it dies
// (killed, or exited with an error, e.g. when the broker went away), as a
// process supervisor would, until the run stops it. The producer is done
// once it exits 0.
type member struct {
	name, kind string
	args       []string
	once       bool     // exit 0 means done (the producer)
	own        *Own     // a program of its own instead of the lab's worker
	env        []string // its environment (the contract's)

	mu       sync.Mutex
	cur      *worker.Process
	started  time.Time
	restarts int
	done     bool
}

// supervisor starts and restarts the run's workers.
type supervisor struct {
	binary string
	env    []string
	hist   *History
	group  *worker.Group // every process it started, for the screen's workers panel

	mu      sync.Mutex
	members []*member
	stop    chan struct{}
	wg      sync.WaitGroup
}

func newSupervisor(binary string, env []string, hist *History, group *worker.Group) *supervisor {
	if group == nil {
		group = &worker.Group{}
	}
	return &supervisor{binary: binary, env: env, hist: hist, group: group, stop: make(chan struct{})}
}

func (s *supervisor) start(m *member) error {
	spec := worker.Spec{Binary: s.binary, Kind: m.kind, Name: m.name, Args: m.args, Env: s.env,
		OnNote: func(kind, id string) { s.hist.Note(m.name, kind, id) }}
	if m.own != nil {
		spec.Command, spec.Dir, spec.Env, spec.Args, spec.Remote = m.own.Command, m.own.Dir, m.env, nil, m.own.Remote
		// Every line it writes goes into the history (--history): the
		// learner's own log, beside what the lab saw.
		spec.OnLine = func(line string) { s.hist.Event(m.name, "output", line) }
	}
	p, err := worker.Start(spec)
	if err != nil {
		return err
	}
	s.group.Replace(p)
	m.mu.Lock()
	m.cur, m.started = p, time.Now()
	m.mu.Unlock()
	s.hist.Event(m.name, "start", fmt.Sprintf("pid %d", p.PID()))
	return nil
}

// add starts a member and keeps it running.
func (s *supervisor) add(name, kind string, once bool, args ...string) error {
	return s.keep(&member{name: name, kind: kind, args: args, once: once})
}

// addOwn starts a copy of a program of its own and keeps it running.
func (s *supervisor) addOwn(name string, own *Own, env []string) error {
	return s.keep(&member{name: name, kind: own.Role, own: own, env: env})
}

func (s *supervisor) keep(m *member) error {
	if err := s.start(m); err != nil {
		return err
	}
	s.mu.Lock()
	s.members = append(s.members, m)
	s.mu.Unlock()
	s.wg.Add(1)
	go s.watch(m)
	return nil
}

func (s *supervisor) watch(m *member) {
	defer s.wg.Done()
	backoff := 200 * time.Millisecond
	for {
		m.mu.Lock()
		p, started := m.cur, m.started
		m.mu.Unlock()
		select {
		case <-p.Done():
		case <-s.stop:
			return
		}
		st := p.Status()
		last := ""
		if len(st.Log) > 0 {
			last = st.Log[len(st.Log)-1]
		}
		at := fmt.Sprintf(" at %q", st.Point)
		if m.own != nil {
			at = "" // a program of its own has no points
		}
		s.hist.Event(m.name, "exit", fmt.Sprintf("%s, code %d%s: %s", st.State, st.ExitCode, at, last))

		if m.once && st.State == worker.Exited && st.ExitCode == 0 {
			m.mu.Lock()
			m.done = true
			m.mu.Unlock()
			return
		}
		// One that ran a while starts again at once; one that dies at once
		// again (the broker is down) waits longer each time, up to 2 s.
		if time.Since(started) > 3*time.Second {
			backoff = 200 * time.Millisecond
		}
		select {
		case <-s.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
		if err := s.start(m); err != nil {
			s.hist.Event(m.name, "exit", "cannot start: "+err.Error())
			return
		}
		m.mu.Lock()
		m.restarts++
		m.mu.Unlock()
	}
}

// get is the member named name.
func (s *supervisor) get(name string) *member {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.members {
		if m.name == name {
			return m
		}
	}
	return nil
}

// current is m's live process, nil when it is between lives or done.
func (m *member) current() *worker.Process {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done || m.cur == nil {
		return nil
	}
	st := m.cur.Status().State
	if st != worker.Running && st != worker.Paused {
		return nil
	}
	return m.cur
}

func (m *member) finished() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

// restartsBy counts restarts per member.
func (s *supervisor) restartsBy() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for _, m := range s.members {
		m.mu.Lock()
		out[m.name] = m.restarts
		m.mu.Unlock()
	}
	return out
}

// shutdown stops restarting, asks every worker to stop (SIGTERM) and kills
// what has not stopped within d. No process is left.
func (s *supervisor) shutdown(d time.Duration) {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
	s.mu.Lock()
	ms := append([]*member(nil), s.members...)
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range ms {
		m.mu.Lock()
		p := m.cur
		m.mu.Unlock()
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.Status().State == worker.Paused {
				p.Kill()
				return
			}
			p.Terminate(d)
		}()
	}
	wg.Wait()
}

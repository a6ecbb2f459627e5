package ui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/steps"
)

// stepTimeout bounds one step run from the screen; kinds have shorter
// timeouts of their own, this only guards against a stuck service.
const stepTimeout = 2 * time.Minute

// session is one open lesson: its steps.Run and what each step returned.
// Only the App's Update touches its fields; the step itself runs in a
// command goroutine that holds busy, so closing the run waits for it.
type session struct {
	sid         int // tags step messages: a reset makes a new session
	lessonID    string
	run         *steps.Run
	steps       []*lab.Step
	results     map[int]lab.Result
	next        int // index of the next step to run
	running     bool
	runStart    time.Time
	ledgers     []lab.Ledger
	ledgerSteps []int // the step each ledger came from
	// waitSince is when a statement left blocked on a lock started, by SQL
	// session name, to show "waiting 4.2s".
	waitSince map[string]time.Time
	waiting   map[string]bool // last known run.Sessions()
	// catchUp > next means "run steps without a key until next reaches it":
	// a resume replays the steps the learner had already run.
	catchUp int
	// offer is the saved step of a reopened lesson, awaiting the learner's
	// answer: enter resumes (re-runs the steps done, with replay's short
	// waits), r starts over. 0: nothing offered.
	offer int
	// finished: the reopened lesson was done before; nothing runs until
	// the learner takes the next lesson (enter) or starts over (r).
	finished bool
	// resumeTo is where the learner had got to when this resume began: the
	// saved progress never falls below it while the re-run is on its way,
	// so quitting (or a step failing) during a re-run loses no progress.
	resumeTo int
	cursor   int  // choice or predict menu cursor
	moved    bool // the learner moved in this menu: a predict has no option until they do

	ctx    context.Context
	cancel context.CancelFunc
	busy   *sync.Mutex
	closed chan struct{} // closed once run.Close returned
	once   *sync.Once
	after  <-chan struct{}
}

var sessionIDs atomic.Int64

// newSession starts a Run of lesson l. after, when set, is the previous
// run's close: the first step waits for it so a reset never races the old
// run's open transactions.
func newSession(ctx context.Context, env *steps.Env, l *lab.Lesson, after <-chan struct{}) *session {
	c, cancel := context.WithCancel(ctx)
	return &session{
		sid: int(sessionIDs.Add(1)), lessonID: l.ID, run: steps.NewRun(env, l, nil), steps: l.Steps(),
		results: map[int]lab.Result{}, waitSince: map[string]time.Time{}, waiting: map[string]bool{},
		ctx: c, cancel: cancel, busy: &sync.Mutex{}, closed: make(chan struct{}), once: &sync.Once{}, after: after,
	}
}

// Done reports whether every step has run.
func (s *session) Done() bool { return s.next >= len(s.steps) }

// failedLast reports whether the lesson ends in a challenge step whose
// run failed: a challenge that ran to its end without a pass is not
// complete.
func (s *session) failedLast() bool {
	if len(s.steps) == 0 || s.steps[len(s.steps)-1].Kind != "challenge" {
		return false
	}
	r, ok := s.results[len(s.steps)-1]
	return ok && !r.Passed && !r.Skipped
}

// stepDoneMsg carries one step's result back to Update.
type stepDoneMsg struct {
	sid int
	idx int
	res lab.Result
}

// runClosedMsg says a Run finished closing in the background.
type runClosedMsg struct{ sid int }

// workerActionMsg is the outcome of k or c on a worker.
type workerActionMsg struct {
	name, action string
	err          error
}

// skipAhead marks steps that are not on the chosen path as skipped, the
// way replay does, so next always names a step that will run.
func (s *session) skipAhead() {
	for s.next < len(s.steps) && !s.run.Applies(s.steps[s.next]) {
		st := s.steps[s.next]
		s.results[s.next] = lab.Result{Kind: st.Kind, Passed: true, Skipped: true, Line: st.Line,
			Why: "not on this path (" + st.Attrs["when"] + ")"}
		s.next++
	}
}

// pendingChoice is the step waiting for the learner to pick an option (a
// choice, or a predict before it runs), or nil.
func (s *session) pendingChoice() *lab.Step {
	if s.running || s.Done() {
		return nil
	}
	st := s.steps[s.next]
	if !isMenu(st) {
		return nil
	}
	return st
}

// take records the option under the cursor for the pending step: a choice
// picks the path, a predict is only remembered. The cursor goes back to the
// top for the next menu.
func (s *session) take(st *lab.Step) {
	opts := steps.Options(st)
	o := opts[min(s.cursor, len(opts)-1)].Name
	if st.Kind == "predict" {
		s.run.Predictions[st.Attrs["name"]] = o
	} else {
		s.run.Choices[st.Attrs["name"]] = o
	}
	s.cursor, s.moved = 0, false
}

// selected is the option under the cursor, or -1 at a predict the learner
// has not moved in yet: nothing is preselected, so Enter alone never
// "predicts" the first option (three of seven answers sat first).
func (s *session) selected(st *lab.Step) int {
	if st.Kind == "predict" && !s.moved {
		return -1
	}
	return s.cursor
}

// picked reports whether the learner already picked at a menu step (a
// resume restores the picks, then catches up without asking again).
func (s *session) picked(st *lab.Step) bool {
	var ok bool
	if st.Kind == "predict" {
		_, ok = s.run.Predictions[st.Attrs["name"]]
	} else {
		_, ok = s.run.Choices[st.Attrs["name"]]
	}
	return ok
}

// start runs step next as a command.
func (s *session) start() tea.Cmd {
	i := s.next
	s.running, s.runStart = true, time.Now()
	run, st, ctx, busy, sid, after := s.run, s.steps[i], s.ctx, s.busy, s.sid, s.after
	s.after = nil
	return func() tea.Msg {
		if after != nil {
			select {
			case <-after:
			case <-ctx.Done():
			}
		}
		busy.Lock()
		defer busy.Unlock()
		if ctx.Err() != nil {
			return stepDoneMsg{sid: sid, idx: i, res: lab.Result{Kind: st.Kind, Line: st.Line, Why: "interrupted"}}
		}
		c, cancel := context.WithTimeout(ctx, stepTimeout)
		defer cancel()
		return stepDoneMsg{sid: sid, idx: i, res: run.Step(c, st)}
	}
}

// finish records a step's result. It returns false for a stale message.
func (s *session) finish(m stepDoneMsg) bool {
	if m.sid != s.sid || !s.running || m.idx != s.next {
		return false
	}
	s.running = false
	s.results[m.idx] = m.res
	if m.res.Ledger != nil {
		s.ledgers = append(s.ledgers, *m.res.Ledger)
		s.ledgerSteps = append(s.ledgerSteps, m.idx)
	}
	st := s.steps[m.idx]
	// A statement left blocked on a lock: remember when it began so the
	// screen can count the wait up until a later step collects it.
	if st.Kind == "sql" && strings.Contains(m.res.Observed, "still waiting after") {
		s.waitSince[st.Attr("session", "main")] = s.runStart
		s.waiting[st.Attr("session", "main")] = true
	}
	if st.Kind == "await" {
		delete(s.waitSince, st.Attr("session", "main"))
		delete(s.waiting, st.Attr("session", "main"))
	}
	if st.Kind == "reset" {
		s.waitSince, s.waiting = map[string]time.Time{}, map[string]bool{}
	}
	s.next = m.idx + 1
	if !m.res.Passed && !m.res.Skipped {
		s.catchUp = 0 // a resume stops at the first failure
	}
	s.skipAhead()
	return true
}

// closeCmd ends the run in the background: the step in flight is
// cancelled, then workers are killed and SQL sessions closed.
func (s *session) closeCmd() tea.Cmd {
	s.cancel()
	run, busy, sid := s.run, s.busy, s.sid
	return func() tea.Msg {
		busy.Lock()
		run.Close()
		busy.Unlock()
		s.markClosed()
		return runClosedMsg{sid: sid}
	}
}

// closeNow is closeCmd for the way out: it waits at most d for a step in
// flight, then closes regardless, so no worker outlives the lab.
func (s *session) closeNow(d time.Duration) {
	s.cancel()
	deadline := time.Now().Add(d)
	locked := false
	for time.Now().Before(deadline) {
		if s.busy.TryLock() {
			locked = true
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.run.Close()
	if locked {
		s.busy.Unlock()
	}
	s.markClosed()
}

func (s *session) markClosed() { s.once.Do(func() { close(s.closed) }) }

// isClosed reports whether the run has been closed.
func (s *session) isClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}

// workerCmd kills or continues a worker; Kill waits for the process to die,
// so it never runs in Update.
func workerCmd(run *steps.Run, name, action string) tea.Cmd {
	return func() tea.Msg {
		p := run.Workers.Get(name)
		if p == nil {
			return workerActionMsg{name, action, errors.New("no such worker")}
		}
		var err error
		if action == "kill" {
			err = p.Kill()
		} else {
			err = p.Continue()
		}
		return workerActionMsg{name, action, err}
	}
}

package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/worker"
)

// A fault on a program of its own is armed for the copy, not for one life
// of it: a copy being restarted is waited for, and a kill armed at a frame
// kills whichever life sent the frame. Nothing armed outlives its window:
// a cut that did not fire is taken back. Every result says where the fault
// landed, or that it found no moment to land in ("no …"), which the
// verdict counts (untested).

// ownWindow is how long a fault on a program of its own waits for its
// moment: the copy to be up, then the frame it is armed at.
const ownWindow = 6 * time.Second

// mustWindow is ownWindow for a fault the role must survive (Fault.Must).
const mustWindow = 15 * time.Second

// ownSlice is one copy's turn within the window, for a fault any copy may
// take.
const ownSlice = 750 * time.Millisecond

// injectOwn applies a fault to a program of its own, through its proxy and
// signals; ok is false for a fault it does not take (the lab's members').
func (r *Run) injectOwn(ctx context.Context, i int, f Fault) (string, bool) {
	role := r.O.Own.Role
	switch {
	case (f.Kind == KillConsumer && role == "consumer") || (f.Kind == KillRelay && role == "relay"):
		if f.Point == "" {
			return r.killNow(ctx, f.Target), true
		}
		return r.anyCopy(ctx, f, f.Target, func(c context.Context, m *ownMember) (string, bool) { return r.killAt(c, m, f.Point) }), true
	case f.Kind == PauseRelay && role == "relay":
		return r.freezeOwn(ctx, f), true
	case f.Kind == DropConfirm && role == "relay":
		return r.anyCopy(ctx, f, r.pick(i, role).name, r.dropOwn), true
	case f.Kind == CutAMQP && f.Target == role+"s":
		return r.anyCopy(ctx, f, r.pick(i, role).name, r.cutOwn), true
	}
	return "", false
}

// anyCopy tries a fault armed at a frame on copy first; a fault the role
// must survive (Must) then takes turns over every copy, ownSlice each, for
// the whole window, so that a copy with nothing to do (its twin won every
// claim, or it is frozen or restarting) does not leave the run untested
// while another one works. One copy is armed at a time: the fault lands
// once. It returns the last result.
func (r *Run) anyCopy(ctx context.Context, f Fault, first string, try func(context.Context, *ownMember) (string, bool)) (res string) {
	names := []string{first}
	if f.Must {
		for _, n := range r.Copies() {
			if n != first {
				names = append(names, n)
			}
		}
	}
	defer func() {
		if len(names) > 1 && !landed(res) {
			res += " (tried " + strings.Join(names, " and ") + ")"
		}
	}()
	window := ownWindow
	if f.Must {
		// A fault the run claims to test waits longer: a copy frozen,
		// killed or slow to start (Python, under load) may make no move
		// for seconds, and the pipeline goes on working meanwhile.
		window = mustWindow
	}
	end := time.Now().Add(window)
	for i := 0; ; i++ {
		m := r.own[names[i%len(names)]]
		if m == nil {
			return "no such process"
		}
		until := end
		if t := time.Now().Add(ownSlice); len(names) > 1 && t.Before(end) {
			until = t
		}
		c, cancel := context.WithDeadline(ctx, until)
		var ok bool
		if res, ok = try(c, m); !ok {
			<-c.Done() // a try that gave up early still waits out its turn
		}
		cancel()
		if ok || ctx.Err() != nil || !time.Now().Before(end) {
			return res
		}
	}
}

// cutOwn cuts m's connection at its next ack (consumer) or publish (relay),
// which the broker never gets.
func (r *Run) cutOwn(ctx context.Context, m *ownMember) (string, bool) {
	match, what := amqpproxy.Match{Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassBasic, Method: amqpproxy.MethodBasicAck}, "ack"
	if r.O.Own.Role == "relay" {
		match.Method, what = amqpproxy.MethodBasicPublish, "publish"
	}
	if !m.arm(ctx) {
		return fmt.Sprintf("no moment: another fault held %s's proxy", m.name), false
	}
	defer m.disarm()
	fired := m.proxy.CutBefore(match)
	select {
	case <-fired:
		return fmt.Sprintf("%s's connection was cut at its %s, which the broker never got", m.name, what), true
	case <-ctx.Done():
		m.proxy.Disarm(fired)
		return fmt.Sprintf("no %s from %s within the window: nothing cut", what, m.name), false
	}
}

// arm takes m's proxy for one fault armed at a frame, waiting for one
// armed before it; false when ctx ended first.
func (m *ownMember) arm(ctx context.Context) bool {
	select {
	case m.arming <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (m *ownMember) disarm() { <-m.arming }

// waitLife is copy mem's live process, waiting for a restart within ctx;
// nil when none came.
func waitLife(ctx context.Context, mem *member) *worker.Process {
	for {
		if p := mem.current(); p != nil {
			return p
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// killNow kills copy target's live process at once, waiting for one being
// restarted.
func (r *Run) killNow(ctx context.Context, target string) string {
	mem := r.sup.get(target)
	if mem == nil {
		return "no such process"
	}
	c, cancel := context.WithTimeout(ctx, ownWindow)
	defer cancel()
	p := waitLife(c, mem)
	if p == nil {
		return fmt.Sprintf("not running: %s was not up for %s", target, ownWindow)
	}
	pid := p.PID()
	p.Kill()
	return fmt.Sprintf("SIGKILL pid %d", pid) + r.deadOnTheWire(ctx, target)
}

// killAt kills copy m at its next frame of point (ack, after-ack, publish,
// confirm), waiting within ctx for it to be up and to send it.
func (r *Run) killAt(ctx context.Context, m *ownMember, point string) (string, bool) {
	mem := r.sup.get(m.name)
	if mem == nil {
		return "no such process", false
	}
	if waitLife(ctx, mem) == nil {
		return fmt.Sprintf("not running: %s was not up within the window", m.name), false
	}
	if !m.arm(ctx) {
		return fmt.Sprintf("no moment: another fault held %s's proxy", m.name), false
	}
	defer m.disarm()
	var fired <-chan struct{}
	var what string
	switch point {
	case "ack":
		fired = m.proxy.CutBefore(amqpproxy.Match{Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassBasic, Method: amqpproxy.MethodBasicAck})
		what = "its ack was cut before the broker got it"
	case "after-ack":
		ch := make(chan struct{})
		m.mu.Lock()
		m.freeze = ch
		m.mu.Unlock()
		fired = ch
		what = "its ack reached the broker and it was stopped at once"
	case "publish":
		fired = m.proxy.CutBefore(amqpproxy.Match{Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassBasic, Method: amqpproxy.MethodBasicPublish})
		what = "its publish was cut before the broker got it"
	case "confirm":
		fired = m.proxy.CutBefore(amqpproxy.Match{Dir: amqpproxy.ToClient, Class: amqpproxy.ClassBasic, Method: amqpproxy.MethodBasicAck})
		what = "the broker's confirm to it was cut before it read it"
	}
	select {
	case <-fired:
	case <-ctx.Done():
		if point == "after-ack" {
			m.mu.Lock()
			m.freeze = nil
			m.mu.Unlock()
		} else {
			m.proxy.Disarm(fired) // so the cut does not hit a later frame
		}
		frame := map[string]string{"ack": "ack", "after-ack": "ack", "publish": "publish", "confirm": "confirm"}[point]
		dir := "from"
		if point == "confirm" {
			dir = "to"
		}
		return fmt.Sprintf("no %s %s %s within the window: nothing killed", frame, dir, m.name), false
	}
	if point == "after-ack" {
		// The ack is on its way; let the proxy forward it before the kill.
		time.Sleep(50 * time.Millisecond)
	}
	// The life that sent the frame: the one up now, not the one the fault
	// was armed under (it may have exited on its own since).
	if q := mem.current(); q != nil {
		pid := q.PID()
		q.Kill()
		return fmt.Sprintf("SIGKILL pid %d of %s: %s", pid, m.name, what) + r.deadOnTheWire(ctx, m.name), true
	}
	return fmt.Sprintf("%s: %s; it had exited on its own by then", m.name, what), true
}

// deadOnTheWire makes a killed copy on another machine (Own.Remote) dead
// where the run can see it, whatever that machine did with the kill: its
// broker connections cut at its proxy, its MySQL sessions ended. It says
// what it did, for the fault's result.
func (r *Run) deadOnTheWire(ctx context.Context, copy string) string {
	if r.O.Own == nil || r.O.Own.Remote == nil {
		return ""
	}
	m := r.own[copy]
	u, ok := r.dbUsers[copy]
	if m == nil || !ok {
		return ""
	}
	cut := m.proxy.CutAll()
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ended := 0
	ids, _ := r.sessions(c, "USER", u.name)
	for _, id := range ids {
		if _, err := r.server.ExecContext(c, fmt.Sprintf("KILL CONNECTION %d", id)); err == nil {
			ended++
		}
	}
	return fmt.Sprintf("; on the run's side: %d broker connection(s) cut, %d MySQL session(s) ended", cut, ended)
}

// dropOwn swallows the broker's next confirm to copy m, and says whose.
func (r *Run) dropOwn(ctx context.Context, m *ownMember) (string, bool) {
	if !m.arm(ctx) {
		return fmt.Sprintf("no moment: another fault held %s's proxy", m.name), false
	}
	defer m.disarm()
	ch := make(chan struct{})
	m.mu.Lock()
	m.dropped = ch
	m.mu.Unlock()
	m.proxy.DropNextConfirms(1)
	select {
	case <-ch:
		return "the broker's next confirm to " + m.name + " was dropped", true
	case <-ctx.Done():
		m.proxy.DropNextConfirms(-1)
		m.mu.Lock()
		m.dropped = nil
		m.mu.Unlock()
		return fmt.Sprintf("no confirm came to %s within the window (does it ask for confirms?): nothing dropped", m.name), false
	}
}

// freezeOwn stops a relay (SIGSTOP) past its lease, then lets it go on: a
// GC pause or a stalled VM, after which it acts on a claim that expired.
func (r *Run) freezeOwn(ctx context.Context, f Fault) string {
	mem := r.sup.get(f.Target)
	if mem == nil {
		return "no such process"
	}
	c, cancel := context.WithTimeout(ctx, ownWindow)
	p := waitLife(c, mem)
	cancel()
	if p == nil {
		return fmt.Sprintf("not running: %s was not up for %s", f.Target, ownWindow)
	}
	m := r.own[f.Target]
	m.mu.Lock()
	already := m.frozen
	m.frozen = true
	m.mu.Unlock()
	if already {
		return "already frozen by an earlier pause: nothing done"
	}
	defer func() { m.mu.Lock(); m.frozen = false; m.mu.Unlock() }()
	if err := p.Freeze(); err != nil {
		return "not running: " + err.Error()
	}
	hold := time.Duration(r.O.Lease)*time.Second + 1500*time.Millisecond
	select {
	case <-ctx.Done():
	case <-time.After(hold):
	}
	if err := p.Thaw(); err != nil {
		return fmt.Sprintf("frozen; not thawed: %v", err)
	}
	return fmt.Sprintf("frozen (SIGSTOP) for %s (lease %ds), then went on", hold, r.O.Lease)
}

// landed reports whether a fault's result says it hit its moment.
func landed(result string) bool {
	return result != "" && !missed(result) && !strings.HasPrefix(result, "no ")
}

// untested names the faults a program of its own must meet that found no
// moment to land in: a run without them proves nothing about the program,
// so it is no pass.
func (r *Run) untested(s *Summary) []string {
	var v []string
	autoAck := ""
	for _, e := range r.Hist.Procs() {
		if e.Op == "consume" && strings.Contains(e.Detail, "no-ack") {
			autoAck = "; your consumer consumes with auto-ack (no-ack), so it never acks: the broker forgets each message as it sends it"
		}
	}
	for _, f := range r.Hist.Timeline().Faults {
		if f.Must && !landed(f.Result) {
			what := string(f.Kind)
			if f.Point != "" {
				what += " at " + f.Point
			}
			v = append(v, fmt.Sprintf("untested: %s on %s found no moment to land in (%s), so this run cannot say your program survives it: "+
				"a copy must be up and consuming (or publishing) while the schedule runs%s", what, f.Target, f.Result, autoAck))
		}
	}
	return v
}

// explainFindings turns the first findings of each kind into explanations,
// each with the order's story.
func (r *Run) explainFindings(ctx context.Context, fs []finding) []Why {
	var out []Why
	per := map[string]int{}
	for _, f := range fs {
		if per[f.kind] == maxFindings {
			continue
		}
		per[f.kind]++
		w := Why{Order: f.order, Verdict: findingKinds[f.kind].verdict, Because: f.text}
		if f.order > 0 {
			w.Story = r.story(ctx, f.order).render()
		}
		out = append(out, w)
	}
	return out
}

// Exits says how copy's lives ended, counted by how: "killed ×2, exited
// with code 1 ×3". A program that exits 0 is told so: the lab restarts it
// like any other.
func (r *Run) Exits(copy string) string {
	var order []string
	n := map[string]int{}
	for _, e := range r.Hist.Procs() {
		if e.Proc != copy || e.Op != "exit" {
			continue
		}
		how, _, _ := strings.Cut(e.Detail, ":")
		switch {
		case strings.HasPrefix(how, "killed"):
			how = "killed"
		case strings.HasPrefix(how, "exited, code "):
			how = "exited with code " + strings.TrimPrefix(how, "exited, code ")
		}
		if n[how] == 0 {
			order = append(order, how)
		}
		n[how]++
	}
	var out []string
	for _, how := range order {
		out = append(out, fmt.Sprintf("%s ×%d", how, n[how]))
	}
	return strings.Join(out, ", ")
}

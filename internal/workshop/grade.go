package workshop

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"charm.land/ssh"

	"github.com/rmlab/lab/challenge"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/services"
)

// grading bounds what participants' challenge runs cost: one at a time
// per participant, at most max on the server at once.
type grading struct {
	mu      sync.Mutex
	max     int
	running map[string]*agent
}

func (g *grading) begin(user string, a *agent) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running == nil {
		g.running = map[string]*agent{}
	}
	if _, ok := g.running[user]; ok {
		return fmt.Errorf("a challenge run of yours is going already: one at a time (wait for its verdict)")
	}
	if len(g.running) >= g.max {
		return fmt.Errorf("the server runs %d challenge runs at once and all are taken: try again in a minute", g.max)
	}
	g.running[user] = a
	return nil
}

func (g *grading) end(user string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.running, user)
}

// allows is the door's rule for a forward (direct-tcpip): only to an
// address the user's own run asked to be forwarded, while it runs.
func (g *grading) allows(user, dest string) bool {
	g.mu.Lock()
	a := g.running[user]
	g.mu.Unlock()
	return a != nil && a.allows(dest)
}

// forwardCallback is the door's LocalPortForwardingCallback.
func (s *Server) forwardCallback(ctx ssh.Context, destHost string, port uint32) bool {
	dest := net.JoinHostPort(destHost, strconv.FormatUint(uint64(port), 10))
	if s.grading.allows(ctx.User(), dest) {
		return true
	}
	s.logf("refused %s from %s: a forward to %s, which no challenge run of theirs asked for", safeName(ctx.User()), host(ctx.RemoteAddr()), plain.Line(dest, 80))
	return false
}

// gradeRun is challenge-run: the participant's challenge graded here,
// their program run on their machine as this run's agent.
func (s *Server) gradeRun(sess ssh.Session, who string, args []string, refuse func(string)) {
	user := sess.User()
	if p := services.NamespaceProblem(user); p != "" {
		refuse(fmt.Sprintf("%q cannot be a participant's name: %s", safeName(user), p))
		return
	}
	fs := flag.NewFlagSet(challengeRun, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	seed := fs.Uint64("seed", 1, "")
	copies := fs.Int("copies", 0, "")
	duration := fs.Duration("duration", 0, "")
	if len(args) < 1 || fs.Parse(args[1:]) != nil || fs.NArg() > 0 || *seed == 0 || *copies < 0 || *copies > 4 || *duration < 0 || *duration > 2*time.Minute {
		refuse("challenge-run NAME [--seed N] [--copies 1-4] [--duration up to 2m]: lab challenge run NAME --workshop YOU@HOST -- PROGRAM sends it")
		return
	}
	c, err := challenge.Named("en", args[0])
	if err != nil {
		refuse(plain.Line(err.Error(), 200))
		return
	}
	a := newAgent(sess, sess)
	if err := s.grading.begin(user, a); err != nil {
		refuse(err.Error())
		return
	}
	defer s.grading.end(user)
	ctx, cancel := context.WithCancel(sess.Context())
	defer cancel()
	go func() {
		select {
		case <-a.gone:
			cancel() // the participant went away: the run stops
		case <-ctx.Done():
		}
	}()
	svc, done, err := s.participantServices(ctx, user)
	if err != nil {
		refuse("your logins for the run: " + err.Error())
		return
	}
	defer done()
	cfg := svc.Config
	ns := ("c_" + user)[:min(16, 2+len(user))]
	r, err := challenge.New(cfg, c, challenge.Options{Seed: *seed, Copies: *copies, Duration: *duration,
		Command: []string{"your program, on your machine"}, Namespace: ns, Binary: s.cfg.Binary, Remote: a})
	if err != nil {
		refuse(plain.Line(err.Error(), 300))
		return
	}
	s.logf("%s started a challenge run on the server: %s under seed %d", who, c.Name, *seed)
	a.say("lab: the workshop's server grades %s (%s) under seed %d: your program runs on your machine as the %s, %d copies; the run, its faults and its evidence are here", c.Name, c.Title, *seed, c.Role, len(r.Copies()))
	for _, f := range r.Plan {
		a.say("  %s", f)
	}
	sum, err := r.Execute(ctx)
	// The run's queue (the databases were on its own server, gone with
	// it): a graded run leaves nothing on the class's broker, before the
	// participant hears the verdict.
	func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		bc := broker.NewClient(cfg.AMQP)
		defer bc.Close()
		if _, err := bc.Remove(c, "queue", services.Names{NS: ns}.Name(chaos.QueueName)); err != nil {
			s.logf("%s's challenge run left its queue: %v", who, err)
		}
	}()
	if err != nil {
		s.logf("%s's challenge run of %s under seed %d ended without a verdict: %v", who, c.Name, *seed, err)
		a.say("lab: the run ended without a verdict: %s", plain.Line(err.Error(), 400))
		if why := a.why(); why != "" && ctx.Err() != nil {
			a.say("lab: %s", why)
		}
		a.send(wire{Op: opEnd})
		sess.Exit(2)
		return
	}
	a.say("")
	for _, l := range summaryLines(sum) {
		a.say("%s", l)
	}
	kept := s.keepGraded(ctx, user, c.Name, sum)
	verdict := "not passed"
	if sum.OK() {
		verdict = "passed"
	}
	s.logf("graded %s's %s under seed %d on the server: %s", who, c.Name, *seed, verdict)
	if kept != "" {
		a.say("lab: %s", kept)
	}
	a.send(wire{Op: opEnd, Passed: sum.OK()})
	if sum.OK() {
		sess.Exit(0)
	} else {
		sess.Exit(1)
	}
}

// summaryLines is the verdict as the participant's terminal shows it.
func summaryLines(s *chaos.Summary) []string {
	out := []string{fmt.Sprintf("%s  %s, seed %d", s.Verdict(), s.Pipeline, s.Seed),
		fmt.Sprintf("  orders committed %d of %d; applied once %d, lost %d, twice %d", s.Committed, s.Orders, s.Once, s.Lost, s.Twice)}
	for _, x := range s.Violations {
		out = append(out, "  violation: "+x)
	}
	if s.Unproven != "" {
		out = append(out, "  unproven: "+s.Unproven)
	}
	for i, y := range s.Why {
		if i == 3 {
			out = append(out, fmt.Sprintf("  … and %d more", len(s.Why)-3))
			break
		}
		out = append(out, "  "+plain.Cut(strings.Join(strings.Fields(y.Text()), " "), 600))
	}
	return out
}

// keepGraded keeps the server's verdict in the room, under the name the
// participant's session logged in with; what it says of it.
func (s *Server) keepGraded(ctx context.Context, user, name string, sum *chaos.Summary) string {
	rm := s.room()
	if rm == nil {
		return "this workshop keeps no room: the verdict is not kept"
	}
	v := progress.Verdict{Challenge: name, Seed: sum.Seed, Passed: sum.OK(),
		Line: fmt.Sprintf("seed %d: applied once %d of %d, lost %d, twice %d (graded by the workshop's server)", sum.Seed, sum.Once, sum.Committed, sum.Lost, sum.Twice)}
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	store := rm.Store(user)
	p, err := store.Load(c)
	if err == nil {
		p.Keep(v, time.Now())
		var snap []byte
		if snap, err = json.Marshal(p); err == nil {
			err = store.Save(c, snap)
		}
	}
	if err != nil {
		return "the room's database did not take the verdict: " + plain.Line(err.Error(), 200)
	}
	return fmt.Sprintf("kept in room %s, as %s", rm.Name, user)
}

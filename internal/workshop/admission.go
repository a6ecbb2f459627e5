package workshop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"charm.land/ssh"
	"charm.land/wish/v2"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
)

// admit decides whether a session may have a screen: a valid participant
// name, no command (the screen is all there is), no agent forwarding, a
// seat free, and no other screen of the same participant on any server of
// the room (two screens on one namespace would run each other's steps; a
// reset on one would drop the databases under the other). The screen
// middleware runs inside it, with the pty bounded.
func (s *Server) admit(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		user := sess.User()
		who := safeName(user) + " from " + host(sess.RemoteAddr())
		refuse := func(why string) {
			if more := s.refused.take(user); more >= 0 {
				if more > 0 {
					s.logf("refused %d more sessions of %s in the last %s (not each logged)", more, safeName(user), refusalWindow)
				}
				s.logf("refused %s: %s", who, why)
			}
			wish.Fatalln(sess, "lab: "+why)
		}
		if ssh.AgentRequested(sess) {
			refuse("agent forwarding is refused here; connect without -A (ForwardAgent no)")
			return
		}
		if c := sess.Command(); len(c) >= 1 && c[0] == challengeRun && user != Instructor {
			s.gradeRun(sess, who, c[1:], refuse)
			return
		}
		if c := sess.Command(); len(c) == 1 && c[0] == challengeResult {
			// A verdict the participant's own machine computed proves
			// nothing: the room keeps only the server's.
			refuse("the room keeps only the verdicts its server grades: run lab challenge run NAME --workshop YOU@HOST -- PROGRAM (a lab of this version), which runs the challenge here and your program on your machine")
			return
		}
		if _, _, ok := sess.Pty(); !ok || len(sess.Command()) > 0 {
			refuse("this server serves the lab's screen only: connect with ssh -t and no command")
			return
		}
		if user == Instructor {
			if !s.auth.isInstructor(sess) {
				refuse("the room opens only with an instructor's key (lab serve --instructor-keys FILE); a password or a participant's key never opens it")
				return
			}
			st := s.newSeat(sess)
			s.mu.Lock()
			shutting := s.shutting
			if !shutting {
				s.instructors[st] = true
			}
			s.mu.Unlock()
			if shutting {
				refuse("the workshop server is shutting down")
				return
			}
			defer func() {
				s.mu.Lock()
				delete(s.instructors, st)
				s.mu.Unlock()
				st.left()
			}()
			s.guard.admitted(sess.RemoteAddr())
			s.logf("instructor logged in from %s with %s", host(sess.RemoteAddr()), method(sess))
			st.run(next)
			s.logf("instructor's session from %s ended%s", host(sess.RemoteAddr()), st.because())
			return
		}
		if p := services.NamespaceProblem(user); p != "" {
			refuse(fmt.Sprintf("%q cannot be a participant's name: %s; connect as, e.g., ssh alice@HOST", safeName(user), p))
			return
		}
		s.mu.Lock()
		_, twice := s.seats[user]
		full := len(s.seats) >= s.cfg.Seats
		shutting := s.shutting
		var st *seat
		if !twice && !full && !shutting {
			st = s.newSeat(sess)
			s.seats[user] = st
		}
		s.mu.Unlock()
		switch {
		case shutting:
			refuse("the workshop server is shutting down")
			return
		case twice:
			refuse(fmt.Sprintf("%s already has a screen open on this server; close it first (one screen per participant: two would run each other's steps)", user))
			return
		case full:
			refuse(fmt.Sprintf("the workshop is full (%d seats); ask the instructor for a seat", s.cfg.Seats))
			return
		}
		defer func() {
			s.mu.Lock()
			delete(s.seats, user)
			s.mu.Unlock()
			st.left() // a session refused after its seat was taken
		}()
		rm := s.room()
		// The claim is this session's, not this server's: a release late
		// from a session that ended (its run closing) must never free the
		// claim of the next session of the same name on the same server.
		holder := token() // without a room, the seat is this server's only
		if rm != nil {
			holder = rm.Server + "#" + token()
			held, err := s.claim(sess.Context(), rm, user, holder)
			on, _, _ := strings.Cut(held, "#")
			switch {
			case err != nil:
				refuse(fmt.Sprintf("the room's database did not answer (%v); try again in a moment", err))
				return
			case held == room.Resetting:
				refuse(fmt.Sprintf("%s is being reset by the instructor; try again in a few seconds", user))
				return
			case held != "":
				refuse(fmt.Sprintf("%s already has a screen open on %s; close it there first (one screen per participant in the room)", user, on))
				return
			}
			go s.beat(sess.Context(), rm, user, holder)
		}
		s.setLive(user, true, holder)
		s.guard.admitted(sess.RemoteAddr())
		s.logf("%s logged in with %s", who, method(sess))
		s.releases.Add(1) // before run: Shutdown waits for it after run ends
		st.run(next)
		s.logf("session of %s ended%s", who, st.because())
		// A session's end ends its connection: no keepalives answered for
		// it, no second session opened on it.
		if c, ok := sess.Context().Value(ssh.ContextKeyConn).(interface{ Close() error }); ok {
			defer c.Close()
		}
		// The claim goes only once the screen's run has closed (its
		// workers are dead), which follows the session's end: a reset
		// waits for it before it cleans.
		go func() {
			defer s.releases.Done()
			st.waitClosed(10 * time.Second)
			s.mu.Lock()
			slow := s.beforeRelease
			s.mu.Unlock()
			if slow != nil {
				slow()
			}
			s.setLive(user, false, holder)
			if rm != nil {
				c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				rm.Release(c, user, holder)
			}
		}()
	}
}

// method says how a session authenticated: the key (its fingerprint) the
// handshake ended with, or the password.
func method(sess ssh.Session) string {
	if k := sess.PublicKey(); k != nil {
		return "key " + gossh.FingerprintSHA256(k)
	}
	return "the password"
}

// setLive records whether user holds a screen here that has not closed,
// under its session's holder: an ended session clears only its own.
func (s *Server) setLive(user string, on bool, holder string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.live[user] = holder
	} else if s.live[user] == holder {
		delete(s.live, user)
	}
}

// token is a session's own mark in its claim.
func token() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// claim takes user's screen in the room, waiting a few seconds for one
// that is closing (a participant who quit on one server and at once
// connects to another; a reset finishing).
func (s *Server) claim(ctx context.Context, rm *room.Room, user, holder string) (string, error) {
	wait := s.cfg.ClaimWait
	if wait <= 0 {
		wait = claimWait
	}
	deadline := time.Now().Add(wait)
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		held, err := rm.Claim(c, user, holder)
		cancel()
		if err != nil || held == "" || time.Now().After(deadline) {
			return held, err
		}
		select {
		case <-ctx.Done():
			return held, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// claimWait is how long a login waits for the participant's screen
// elsewhere in the room to close before it is refused.
const claimWait = 5 * time.Second

// beat renews user's screen in the room while their session lasts.
func (s *Server) beat(ctx context.Context, rm *room.Room, user, holder string) {
	t := time.NewTicker(room.Beat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c, cancel := context.WithTimeout(ctx, room.Beat)
		held, err := rm.Renew(c, user, holder)
		cancel()
		if err == nil && !held {
			s.logf("%s's screen was taken over by another server of the room (this one's beats had stopped)", user)
			return // once: the claim is gone, and saying it again every beat floods the log
		}
	}
}

// guard bounds what a connection may cost before it has a screen: each
// address holds at most max such connections, and each is closed after
// timeout (a connection that never authenticates, or authenticates and
// never opens its screen, is held no longer).
type guard struct {
	max     int
	timeout time.Duration
	log     func(string, ...any)

	mu      sync.Mutex
	pending map[string]int          // address → connections without a screen
	conns   map[string]*guardedConn // remote address → its connection
}

func newGuard(max int, timeout time.Duration, log func(string, ...any)) *guard {
	return &guard{max: max, timeout: timeout, log: log, pending: map[string]int{}, conns: map[string]*guardedConn{}}
}

type guardedConn struct {
	net.Conn
	g       *guard
	ip      string
	timer   *time.Timer
	settled bool // admitted or closed: no longer pending (under g.mu)
}

// wrap is the server's ConnCallback: nil refuses the connection.
func (g *guard) wrap(_ ssh.Context, c net.Conn) net.Conn {
	ip := host(c.RemoteAddr())
	g.mu.Lock()
	if g.pending[ip] >= g.max {
		g.mu.Unlock()
		g.log("refused a connection from %s: it already has %d connections that have not logged in", ip, g.max)
		return nil
	}
	g.pending[ip]++
	gc := &guardedConn{Conn: c, g: g, ip: ip}
	g.conns[c.RemoteAddr().String()] = gc
	g.mu.Unlock()
	gc.timer = time.AfterFunc(g.timeout, func() {
		if g.settle(gc) {
			g.log("closed a connection from %s: no screen within %s of connecting", ip, g.timeout)
			c.Close()
		}
	})
	return gc
}

// settle takes gc off the pending count once; true if this call did.
func (g *guard) settle(gc *guardedConn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc.settled {
		return false
	}
	gc.settled = true
	if g.pending[gc.ip]--; g.pending[gc.ip] <= 0 {
		delete(g.pending, gc.ip)
	}
	return true
}

// admitted marks the connection at addr as holding a screen.
func (g *guard) admitted(addr net.Addr) {
	g.mu.Lock()
	gc := g.conns[addr.String()]
	g.mu.Unlock()
	if gc != nil {
		gc.timer.Stop()
		g.settle(gc)
	}
}

func (gc *guardedConn) Close() error {
	gc.timer.Stop()
	gc.g.settle(gc)
	gc.g.mu.Lock()
	if gc.g.conns[gc.RemoteAddr().String()] == gc {
		delete(gc.g.conns, gc.RemoteAddr().String())
	}
	gc.g.mu.Unlock()
	return gc.Conn.Close()
}

// What one name's refused sessions may write to the log: refusalLines a
// refusalWindow, then one line for the rest when the next window opens
// (21000 refused sessions over one connection wrote 21000 lines).
const (
	refusalLines  = 5
	refusalWindow = 10 * time.Second
)

type refusalLog struct {
	mu sync.Mutex
	by map[string]*refusalCount
}

type refusalCount struct {
	since      time.Time
	n, dropped int
}

// take says whether a refusal of name is logged: -1 for not, else how many
// of name's refusals went unlogged before it (said in a line of their own).
func (l *refusalLog) take(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[string]*refusalCount{}
	}
	now := time.Now()
	c := l.by[name]
	if c == nil || now.Sub(c.since) > refusalWindow {
		dropped := 0
		if c != nil {
			dropped = c.dropped
		}
		if len(l.by) > 10000 { // names are the client's to choose: forget the old ones
			for k, v := range l.by {
				if now.Sub(v.since) > refusalWindow {
					delete(l.by, k)
				}
			}
		}
		l.by[name] = &refusalCount{since: now, n: 1}
		return dropped
	}
	if c.n >= refusalLines {
		c.dropped++
		return -1
	}
	c.n++
	return 0
}

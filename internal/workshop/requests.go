package workshop

import (
	"sync"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// What one session, and one connection, may ask before a screen starts:
// the SSH library keeps every env request it is sent, so a client sending
// thousands of large ones grows the server's memory without bound (2000 ×
// 100 kB: 300 MB); and one connection may open any number of sessions
// (1000 channels × 32 × 4 kB grew the server by 155 MB).
const (
	maxEnv          = 32        // env requests per session
	maxEnvBytes     = 4 * 1024  // each one's name and value
	maxConnEnvBytes = 64 * 1024 // every session's of one connection together
	maxConnSessions = 4         // session channels open at once on one connection
)

// connBudget is what one connection has spent: its open sessions and the
// env bytes its sessions were given.
type connBudget struct {
	mu       sync.Mutex
	open     int
	envBytes int
	// Each kind of refusal's log line is written once per connection.
	saidSessions, saidEnv, saidOther bool
}

// budgets are the connections' budgets, each removed when its connection
// closes.
type budgets struct{ m sync.Map }

func (b *budgets) of(conn *gossh.ServerConn) *connBudget {
	v, loaded := b.m.LoadOrStore(conn, &connBudget{})
	if !loaded {
		go func() { conn.Wait(); b.m.Delete(conn) }()
	}
	return v.(*connBudget)
}

// boundedSession is the library's session handler behind the connection's
// budget: a session past maxConnSessions open at once is rejected, and
// env requests past maxEnv, larger than maxEnvBytes, or past the
// connection's maxConnEnvBytes are refused and never reach the library.
// The first refusal of a connection is logged.
func (s *Server) boundedSession(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
	b := s.budgets.of(conn)
	b.mu.Lock()
	if b.open >= maxConnSessions {
		first := !b.saidSessions
		b.saidSessions = true
		b.mu.Unlock()
		nc.Reject(gossh.ResourceShortage, "at most 4 sessions at once on one connection")
		if first {
			s.logf("refused more sessions on one connection from %s (%s): at most %d at once", conn.RemoteAddr(), safeName(conn.User()), maxConnSessions)
		}
		return
	}
	b.open++
	b.mu.Unlock()
	defer func() { b.mu.Lock(); b.open--; b.mu.Unlock() }()
	ssh.DefaultSessionHandler(srv, conn, envBounded{nc, b, s, conn}, ctx)
}

type envBounded struct {
	gossh.NewChannel
	b    *connBudget
	s    *Server
	conn *gossh.ServerConn
}

func (e envBounded) Accept() (gossh.Channel, <-chan *gossh.Request, error) {
	ch, reqs, err := e.NewChannel.Accept()
	if err != nil {
		return ch, reqs, err
	}
	out := make(chan *gossh.Request)
	go func() {
		defer close(out)
		n := 0
		for r := range reqs {
			if r.Type == "subsystem" || r.Type == "x11-req" {
				// The screen only: sftp, X11 and the like are refused, and
				// the log says so (once per connection).
				if r.WantReply {
					r.Reply(false, nil)
				}
				e.b.mu.Lock()
				first := !e.b.saidOther
				e.b.saidOther = true
				e.b.mu.Unlock()
				if first {
					e.s.logf("refused %s from %s: a %s request (this server serves the lab's screen only)", safeName(e.conn.User()), e.conn.RemoteAddr(), r.Type)
				}
				continue
			}
			if r.Type == "env" {
				e.b.mu.Lock()
				ok := n < maxEnv && len(r.Payload) <= maxEnvBytes && e.b.envBytes+len(r.Payload) <= maxConnEnvBytes
				if ok {
					e.b.envBytes += len(r.Payload) // kept by the library: counted
				}
				first := !ok && !e.b.saidEnv
				if first {
					e.b.saidEnv = true
				}
				e.b.mu.Unlock()
				if !ok {
					if r.WantReply {
						r.Reply(false, nil)
					}
					if first {
						e.s.logf("refused env requests from %s (%s): at most %d per session, %d bytes each, %d bytes per connection",
							e.conn.RemoteAddr(), safeName(e.conn.User()), maxEnv, maxEnvBytes, maxConnEnvBytes)
					}
					continue
				}
				n++
			}
			out <- r
		}
	}()
	return ch, out, nil
}

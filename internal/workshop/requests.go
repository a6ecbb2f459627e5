package workshop

import (
	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// What one session may ask before its screen starts: the SSH library keeps
// every env request it is sent, so a client sending thousands of large ones
// grows the server's memory without bound (2000 × 100 kB: 300 MB).
const (
	maxEnv      = 32       // env requests per session
	maxEnvBytes = 4 * 1024 // each one's name and value
)

// boundedSession is the library's session handler behind a filter of the
// channel's requests: env requests past maxEnv, or larger than
// maxEnvBytes, are refused and never reach it.
func boundedSession(srv *ssh.Server, conn *gossh.ServerConn, nc gossh.NewChannel, ctx ssh.Context) {
	ssh.DefaultSessionHandler(srv, conn, envBounded{nc}, ctx)
}

type envBounded struct{ gossh.NewChannel }

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
			if r.Type == "env" {
				if n >= maxEnv || len(r.Payload) > maxEnvBytes {
					if r.WantReply {
						r.Reply(false, nil)
					}
					continue
				}
				n++ // kept by the library: counted
			}
			out <- r
		}
	}()
	return ch, out, nil
}

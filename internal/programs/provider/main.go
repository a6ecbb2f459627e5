package provider

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/rmlab/lab/internal/worker"
)

// Points are the pause points `lab worker provider` announces, in the order a
// message meets them; a lesson's spawn pause-at= and wait until= are
// checked against them when it loads.
var Points = []string{"listening", "sent", "replayed"}

// Main is `lab worker provider [--listen ADDR]`. It reaches "listening" once
// it accepts requests, then "sent" for every SMS sent and "replayed" for
// every request answered from its Idempotency-Key record.
func Main(ctx context.Context, p *worker.Parent, args []string) error {
	fs := flag.NewFlagSet("lab worker provider", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (default: a free loopback port)")
	if err := fs.Parse(args); err != nil {
		return worker.FlagError("lab worker provider", fs, err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("the SMS provider cannot listen on %s: %v (pass another --listen, or leave it out for a free port)", *listen, err)
	}
	s := NewServer()
	s.OnSend = func(m SMS, replayed bool) {
		key := "no Idempotency-Key"
		if m.Key != "" {
			key = "Idempotency-Key " + m.Key
		}
		if replayed {
			p.Logf("%s seen before: answered with %s again, nothing sent", key, m.MessageID)
			p.Reach(ctx, "replayed")
			return
		}
		p.Logf("sent %s to user %d (%s)", m.MessageID, m.To, key)
		p.Reach(ctx, "sent")
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	p.Logf("%shttp://%s", ListeningPrefix, ln.Addr())
	if err := p.Reach(ctx, "listening"); err != nil {
		return nil
	}
	go func() {
		<-ctx.Done()
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(c)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	st := s.Stats(0)
	p.Logf("stopped: %d requests, %d SMS sent, %d answered from the key record", st.Requests, st.Sent, st.Replayed)
	return nil
}

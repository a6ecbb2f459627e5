package steps

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/amqpproxy"
)

func init() { Register("faultproxy", faultProxyKind{}) }

// faultProxyKind starts (on first use in a run) an AMQP fault proxy in front
// of the lab's broker and sets faults on it. Later steps reach it at
// ${faultproxy}, its host:port (no credentials, so a command line that
// shows it shows no password): `lab worker relay --amqp ${faultproxy}`.
//
//	```faultproxy
//	drop-confirm 1      swallow the broker's confirm for publish seq 1 (per channel)
//	drop-return 1       swallow the 1st basic.return of each connection
//	delay 300ms         hold broker→client frames this long
//	reset               clear every fault
//	log                 show the wire log (method frames, drops marked)
//	```
//
// The outcome's facts: publishes, confirms-forwarded, confirms-dropped,
// returns-forwarded, returns-dropped (fact confirms-dropped 1).
type faultProxyKind struct{}

func (faultProxyKind) Check(s *lab.Step) error {
	if err := CheckAttrs(s); err != nil {
		return err
	}
	for i, line := range strings.Split(s.Body, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		ok := false
		switch f[0] {
		case "drop-confirm", "drop-return":
			if len(f) == 2 {
				n, err := strconv.Atoi(f[1])
				ok = (err == nil && n > 0) || strings.HasPrefix(f[1], "${") // a choice's option
			}
		case "delay":
			if len(f) == 2 {
				_, err := time.ParseDuration(f[1])
				ok = err == nil
			}
		case "reset", "log":
			ok = len(f) == 1
		}
		if !ok {
			return fmt.Errorf("%s:%d: faultproxy line %q: write drop-confirm N, drop-return N, delay 300ms, reset or log", s.File, s.Line+1+i, strings.TrimSpace(line))
		}
	}
	return nil
}

// FaultProxy returns the run's proxy, starting it on first use.
func (r *Run) FaultProxy() (*amqpproxy.Proxy, error) {
	if p, ok := r.State("outbox.faultproxy", nil).(*amqpproxy.Proxy); ok {
		return p, nil
	}
	u, err := url.Parse(r.Env.Svc.Config.AMQP)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("cannot find the broker's host:port in its URL")
	}
	port := u.Port()
	if port == "" {
		port = "5672" // amqp://host/ means the default port
	}
	p, err := amqpproxy.New("", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, err
	}
	r.State("outbox.faultproxy", func() any { return p })
	r.OnClose(func() { p.Close() })
	r.SetVar("faultproxy", p.Addr())
	return p, nil
}

func (faultProxyKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	p, err := r.FaultProxy()
	if err != nil {
		return fail("fault proxy: %v", err)
	}
	obs := []string{fmt.Sprintf("fault proxy listening on %s, forwarding to the broker", p.Addr())}
	var sent []string
	for _, line := range strings.Split(s.Body, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		sent = append(sent, strings.Join(f, " "))
		switch f[0] {
		case "drop-confirm":
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 1 {
				return fail("faultproxy: drop-confirm %q is not a publish number from 1", f[1])
			}
			p.DropConfirm(n)
			obs = append(obs, fmt.Sprintf("will drop the broker's confirm for publish seq %d on every confirm-mode channel", n))
		case "drop-return":
			n, err := strconv.Atoi(f[1])
			if err != nil || n < 1 {
				return fail("faultproxy: drop-return %q is not a return number from 1", f[1])
			}
			p.DropReturn(n)
			obs = append(obs, fmt.Sprintf("will drop basic.return number %d of each connection", n))
		case "delay":
			d, _ := time.ParseDuration(f[1])
			p.Delay(d, amqpproxy.ToClient)
			obs = append(obs, fmt.Sprintf("broker→client frames held %s", d))
		case "reset":
			p.Reset()
			obs = append(obs, "every fault cleared")
		case "log":
			for _, e := range p.Events() {
				if e.Dropped || strings.HasPrefix(e.Name, "basic.") {
					obs = append(obs, e.String())
				}
			}
		}
	}
	c := p.Counts()
	r.SetOutcome(&Outcome{Source: "faultproxy", Stmt: strings.Join(sent, "; "), Extra: map[string]string{
		"publishes":          strconv.Itoa(c.Publishes),
		"confirms-forwarded": strconv.Itoa(c.ConfirmsForwarded),
		"confirms-dropped":   strconv.Itoa(c.ConfirmsDropped),
		"returns-forwarded":  strconv.Itoa(c.ReturnsForwarded),
		"returns-dropped":    strconv.Itoa(c.ReturnsDropped),
	}, Columns: []string{"wire"}, Rows: rowsOf(obs[1:])})
	obs = append(obs, fmt.Sprintf("so far: %d publish(es), %d confirm(s) forwarded, %d dropped", c.Publishes, c.ConfirmsForwarded, c.ConfirmsDropped))
	return lab.Result{Passed: true, Sent: sent, Observed: strings.Join(obs, "\n")}
}

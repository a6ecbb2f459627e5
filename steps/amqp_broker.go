package steps

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/amqpproxy"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/node"
)

// queuesKind shows queues as the broker reports them now, one article name
// per line. Expectations after it (ready 2, consumers 0) read the broker
// again when they run.
//
//	```queues [until="ready 1"] [timeout=10s]
//	orders
//	```
//
// until= polls the first queue until the figure holds: the broker requeues
// a dead consumer's deliveries once it has noticed the connection is gone,
// a moment after the kill.
type queuesKind struct{}

func queueNames(s *lab.Step) []string {
	var out []string
	for _, l := range strings.Split(s.Body, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, strings.Fields(l)[0])
		}
	}
	return out
}

func parseUntil(v string) (string, int, error) {
	f := strings.Fields(v)
	if len(f) != 2 || (f[0] != "ready" && f[0] != "consumers") {
		return "", 0, fmt.Errorf("until=%q: write until=\"ready N\" or until=\"consumers N\"", v)
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return "", 0, fmt.Errorf("until=%q: %s wants a number", v, f[0])
	}
	return f[0], n, nil
}

func (queuesKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "until", "timeout"); err != nil {
		return err
	}
	if v, ok := s.Attrs["until"]; ok {
		if _, _, err := parseUntil(v); err != nil {
			return fmt.Errorf("%s: %v", s.Where(), err)
		}
	}
	if _, err := attrDuration(s, "timeout", 0); err != nil {
		return err
	}
	if len(queueNames(s)) == 0 {
		return fmt.Errorf("%s: queues step names no queue (one per line)", s.Where())
	}
	return nil
}

func (queuesKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	st := amqpOf(r)
	var waited string
	if v, ok := s.Attrs["until"]; ok {
		what, want, _ := parseUntil(v)
		timeout, _ := attrDuration(s, "timeout", 10*time.Second)
		start := time.Now()
		for {
			qs, err := st.queueStat(ctx, queueNames(s)[0])
			if err != nil {
				return fail("%v", err)
			}
			got := qs.Ready
			if what == "consumers" {
				got = qs.Consumers
			}
			if qs.Exists && got == want {
				waited = sayQueueReached.F(qs.Name, what, want, durText(time.Since(start)))
				break
			}
			if time.Since(start) > timeout {
				return lab.Result{Why: sayStillNot.F(qs.Name, what, got, want, timeout)}
			}
			select {
			case <-ctx.Done():
				return fail("interrupted")
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	o := &Outcome{Source: "queue", Columns: []string{"queue", "ready", "unacked", "consumers"}, Extra: map[string]string{}}
	source := ""
	for i, n := range queueNames(s) {
		qs, err := st.queueStat(ctx, n)
		if err != nil {
			return fail("%v", err)
		}
		row := []string{qs.Name, "(no such queue)", "", ""}
		if qs.Down != "" {
			row = []string{qs.Name, "(unavailable: " + qs.Down + ")", "", ""}
		} else if qs.Exists {
			ready := strconv.Itoa(qs.Ready)
			if broker.TypeOf(qs.Name) == broker.Stream {
				ready += " (stream length)"
			}
			row = []string{qs.Name, ready, strconv.Itoa(qs.Unacked), strconv.Itoa(qs.Consumers)}
			source = qs.Source
		}
		o.Rows = append(o.Rows, row)
		if i == 0 {
			o.Extra["queue"] = n
			o.Extra["exists"] = strconv.FormatBool(qs.Exists)
			o.Extra["down"] = qs.Down
			o.Extra["ready"] = strconv.Itoa(qs.Ready)
			o.Extra["unacked"] = strconv.Itoa(qs.Unacked)
			o.Extra["consumers"] = strconv.Itoa(qs.Consumers)
		}
	}
	r.setOutcome(o)
	obs := Table(o.Columns, o.Rows)
	if source != "" {
		obs += "\n" + sayAtBrokerNow.F(source)
	}
	if waited != "" {
		obs = waited + "\n" + obs
	}
	return lab.Result{Passed: true, Sent: []string{"queue.declare passive=true " + strings.Join(queueNames(s), ", ")}, Observed: obs}
}

// proxyKind sets faults on the run's AMQP proxy, which sits between the
// lab's via=proxy connections and the broker and drops or holds real frames
// on the wire; the publishing code stays the same.
//
//	```proxy drop-confirm=2
//	```
//
// drop-confirm=N swallows the broker's confirm of publish seq N (per
// channel); drop-return=N the Nth basic.return of a connection; delay=200ms
// holds frames both ways; cut-after=basic.publish closes the connection
// right after forwarding the next such frame from the client (its content
// never reaches the broker); reset clears the faults; show lists the frames
// the proxy saw since the last show. Later steps reach the proxy at
// ${proxy} (host:port, no credentials, so a command line that shows it shows
// no password), e.g. `lab worker relay --amqp ${proxy}`.
type proxyKind struct{}

var proxyMethods = map[string]amqpproxy.Match{
	"basic.publish": {Dir: amqpproxy.ToBroker, Class: amqpproxy.ClassBasic, Method: amqpproxy.MethodBasicPublish},
	"basic.ack":     {Dir: amqpproxy.ToClient, Class: amqpproxy.ClassBasic, Method: amqpproxy.MethodBasicAck},
}

func (proxyKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "drop-confirm", "drop-return", "delay", "cut-after", "reset", "show"); err != nil {
		return err
	}
	n := 0
	for _, k := range []string{"drop-confirm", "drop-return"} {
		if v, ok := s.Attrs[k]; ok {
			n++
			if strings.HasPrefix(v, "${") {
				continue // a choice's option, checked when it runs
			}
			if i, err := strconv.Atoi(v); err != nil || i < 1 {
				return fmt.Errorf("%s: %s=%q: write a publish or return number from 1", s.Where(), k, v)
			}
		}
	}
	if v, ok := s.Attrs["cut-after"]; ok {
		n++
		if _, known := proxyMethods[v]; !known {
			return fmt.Errorf("%s: cut-after=%s: use basic.publish or basic.ack", s.Where(), v)
		}
	}
	if _, ok := s.Attrs["delay"]; ok {
		n++
		if _, err := attrDuration(s, "delay", 0); err != nil {
			return err
		}
	}
	for _, k := range []string{"reset", "show"} {
		if _, ok := s.Attrs[k]; ok {
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%s: proxy step sets nothing: use drop-confirm=N, drop-return=N, delay=D, cut-after=METHOD, reset or show", s.Where())
	}
	return nil
}

func (proxyKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	st := amqpOf(r)
	p, err := st.proxyFor()
	if err != nil {
		return fail("start the AMQP proxy: %v", err)
	}
	var obs, sent []string
	where := fmt.Sprintf("proxy %s ⇄ broker", p.Addr())
	if _, ok := s.Attrs["reset"]; ok {
		p.Reset()
		sent = append(sent, "proxy reset")
		obs = append(obs, sayNoFaults.F(where))
	}
	if v, ok := s.Attrs["drop-confirm"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fail("proxy drop-confirm=%q: not a publish number from 1", v)
		}
		p.DropConfirm(n)
		sent = append(sent, "proxy drop-confirm="+v)
		obs = append(obs, saySwallowConfirm.F(where, n))
	}
	if v, ok := s.Attrs["drop-return"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fail("proxy drop-return=%q: not a return number from 1", v)
		}
		p.DropReturn(n)
		sent = append(sent, "proxy drop-return="+v)
		obs = append(obs, saySwallowReturn.F(where, n))
	}
	if _, ok := s.Attrs["delay"]; ok {
		d, _ := attrDuration(s, "delay", 0)
		p.Delay(d, amqpproxy.Both)
		sent = append(sent, "proxy delay="+d.String())
		obs = append(obs, sayHoldFrames.F(where, d))
	}
	if v, ok := s.Attrs["cut-after"]; ok {
		p.CutAfter(proxyMethods[v])
		sent = append(sent, "proxy cut-after="+v)
		obs = append(obs, sayCutAfterNext.F(where, v))
	}
	o := &Outcome{Source: "proxy", Columns: []string{"frame"}, Extra: map[string]string{}}
	if _, ok := s.Attrs["show"]; ok {
		evs := p.Events()
		st.mu.Lock()
		from := st.shown
		if from > len(evs) {
			from = 0
		}
		st.shown = len(evs)
		st.mu.Unlock()
		lines := proxyEvents(evs[from:])
		for _, l := range lines {
			o.Rows = append(o.Rows, []string{l})
		}
		c := p.Counts()
		obs = append(obs, lines...)
		obs = append(obs, sayProxyTotals.F(
			c.Publishes, c.ConfirmsForwarded, c.ConfirmsDropped, c.ReturnsForwarded, c.ReturnsDropped))
		o.Extra["publishes"] = strconv.Itoa(c.Publishes)
		o.Extra["dropped-confirms"] = strconv.Itoa(c.ConfirmsDropped)
	}
	r.setOutcome(o)
	return lab.Result{Passed: true, Sent: sent, Observed: strings.Join(obs, "\n")}
}

// restartKind restarts the RabbitMQ node (rabbitmqctl stop_app, start_app)
// when the lab may (--broker-control rabbitmqctl on a local node), and then
// checks what survived, one queue per line:
//
//	```broker-restart
//	orders.transient  gone
//	orders.classic    ready 1
//	```
//
// Without broker control the step is skipped and says why; nothing is
// checked. Every connection to the broker drops, the lab's included: later
// steps open new ones.
type restartKind struct{}

type survival struct {
	queue string
	gone  bool
	ready int
}

func parseSurvivals(s *lab.Step) ([]survival, error) {
	var out []survival
	for i, raw := range strings.Split(s.Body, "\n") {
		l := strings.TrimSpace(raw)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[1] == "gone":
			out = append(out, survival{queue: f[0], gone: true})
		case len(f) == 3 && f[1] == "ready":
			n, err := strconv.Atoi(f[2])
			if err == nil {
				out = append(out, survival{queue: f[0], ready: n})
				continue
			}
			fallthrough
		default:
			return nil, fmt.Errorf("%s:%d: broker-restart line %q: write QUEUE gone or QUEUE ready N", s.File, s.Line+1+i, l)
		}
	}
	return out, nil
}

func (restartKind) Check(s *lab.Step) error {
	if err := checkAttrs(s); err != nil {
		return err
	}
	_, err := parseSurvivals(s)
	return err
}

func (restartKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	owned := nodesOf(r)
	if owned == nil && !r.Env.Svc.Info.BrokerControl {
		return lab.Result{Passed: true, Skipped: true,
			Why: sayMayNotRestart.F(r.Env.Svc.Info.OwnBrokerNote)}
	}
	surv, _ := parseSurvivals(s)
	st := amqpOf(r)
	before := map[string]lab.QueueStat{}
	for _, sv := range surv {
		qs, err := st.queueStat(ctx, sv.queue)
		if err != nil {
			return fail("%v", err)
		}
		before[sv.queue] = qs
	}
	// The run's connections die with the node; drop them first so later
	// steps dial fresh ones instead of finding half-dead ones.
	st.close()
	var ran []string
	var took time.Duration
	var err error
	if owned != nil {
		ran, took, err = restartOwned(ctx, owned)
		st.switchBroker(r.brokerURL())
	} else {
		ran, took, err = broker.Restart(ctx, r.Env.Svc.Config.Rabbitmqctl, r.Env.Svc.Config.AMQP)
	}
	res := lab.Result{Passed: true, Sent: ran}
	if err != nil {
		return lab.Result{Sent: ran, Why: err.Error()}
	}
	obs := []string{sayBrokerRestarted.F(took.Seconds())}
	after, recovered, err := awaitRecovery(ctx, st, surv)
	if err != nil {
		return fail("%v", err)
	}
	if recovered > 0 {
		obs = append(obs, sayQueuesBack.F(recovered.Seconds()))
	}
	o := &Outcome{Source: "broker-restart", Columns: []string{"queue", "before", "after", "expected", ""}, Extra: map[string]string{"restarted": "true"}}
	for _, sv := range surv {
		qs := after[sv.queue]
		b := before[sv.queue]
		show := func(q lab.QueueStat) string {
			if !q.Exists {
				return "gone"
			}
			if q.Down != "" {
				return "unavailable (" + q.Down + ")"
			}
			return fmt.Sprintf("ready %d", q.Ready)
		}
		want := "gone"
		// Gone means it was there before the restart: a misspelt or never
		// declared queue is "gone" after any restart and proves nothing.
		ok := !qs.Exists && b.Exists
		if sv.gone && !b.Exists {
			want = "gone, having existed before"
		}
		if !sv.gone {
			want = fmt.Sprintf("ready %d", sv.ready)
			ok = qs.Exists && qs.Down == "" && qs.Ready == sv.ready
		}
		mark := "✓"
		if !ok {
			mark = "✗"
			res.Passed = false
			if res.Why == "" {
				res.Why = sayAfterRestart.F(qs.Name, show(qs), want)
				if sv.gone && !b.Exists {
					res.Why = sayGoneProvesNothing.F(qs.Name)
				}
			}
		}
		o.Rows = append(o.Rows, []string{qs.Name, show(b), show(qs), want, mark})
	}
	r.setOutcome(o)
	if len(o.Rows) > 0 {
		obs = append(obs, Table(o.Columns, o.Rows))
	}
	res.Observed = strings.Join(obs, "\n")
	res.Elapsed = took
	return res
}

// awaitRecovery reads the queues after a restart. The node accepts
// connections before its quorum queues and streams have restarted (they
// recover in the background, and a passive declare says 404 until then), so
// it reads again until every queue expected to survive is back with its
// messages, for up to 20 s; a queue expected gone is judged on the last
// read, taken after the others are back, when a durable one would be too.
func awaitRecovery(ctx context.Context, st *amqpState, surv []survival) (map[string]lab.QueueStat, time.Duration, error) {
	start := time.Now()
	deadline := start.Add(20 * time.Second)
	for {
		got := map[string]lab.QueueStat{}
		back := true
		for _, sv := range surv {
			qs, err := st.queueStat(ctx, sv.queue)
			if err != nil {
				return nil, 0, err
			}
			got[sv.queue] = qs
			if !sv.gone && (!qs.Exists || qs.Down != "" || qs.Ready < sv.ready) {
				back = false
			}
		}
		if back || time.Now().After(deadline) {
			return got, time.Since(start).Round(100 * time.Millisecond), nil
		}
		select {
		case <-ctx.Done():
			return got, time.Since(start), nil
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// restartOwned restarts the lab's own node 1 the way an operator's restart
// goes: a clean shutdown (SIGTERM), then a start on the same data.
func restartOwned(ctx context.Context, set *node.Set) ([]string, time.Duration, error) {
	start := time.Now()
	n := set.Nodes()[0]
	t := time.Now()
	if err := set.Stop(ctx, 1); err != nil {
		return nil, time.Since(start), err
	}
	ran := []string{sayCleanShutdown.F(set.Command("stop", n), time.Since(t).Seconds())}
	t = time.Now()
	if err := set.Restart(ctx, 1); err != nil {
		return ran, time.Since(start), err
	}
	ran = append(ran, saySameData.F(set.Command("start", n), time.Since(t).Seconds()))
	return ran, time.Since(start), nil
}

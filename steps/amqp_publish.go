package steps

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
)

// declareKind declares exchanges, queues and bindings, one per line, with
// the article's names (namespaced when sent). Everything declared carries
// the lab's mark, so a reset may delete it again.
//
//	```declare
//	exchange orders type=direct durable
//	queue orders type=quorum
//	queue orders.scratch transient
//	bind orders orders key=order.paid
//	```
//
// Exchanges and queues are durable unless the line says transient. A
// channel error (406 PRECONDITION_FAILED for a redeclare with other
// properties) fails the step unless error=CODE names it. allow-error=CODE
// accepts either outcome, for what brokers differ on: RabbitMQ 4.3 refuses
// non-durable non-exclusive queues by default (541), 3.x and 4.0–4.2
// declare them.
type declareKind struct{}

type declLine struct {
	what  string // exchange | queue | bind
	name  string
	other string // bind: the exchange
	opts  map[string]string
	order []string // option keys as written
}

// checkDeclOpt checks one option of a declare line, and names what is
// allowed (every argument with its type) when it is not.
func checkDeclOpt(what, k, v string, hasV bool) error {
	var args []broker.Arg
	switch what {
	case "exchange":
		switch {
		case k == "durable" || k == "transient":
			return nil
		case k == "type":
			if v == "direct" || v == "fanout" || v == "topic" || v == "headers" {
				return nil
			}
			return fmt.Errorf("type=%s: an exchange is direct, fanout, topic or headers", v)
		}
		args = broker.ExchangeArgs
	case "queue":
		switch {
		case k == "durable" || k == "transient":
			return nil
		case k == "type":
			if broker.ValidType(v) {
				return nil
			}
			return fmt.Errorf("type=%s: a queue is classic, quorum or stream", v)
		}
		args = broker.QueueArgs
	case "bind":
		if k == "key" {
			return nil
		}
		return fmt.Errorf("%q: a bind line takes key=K only", k)
	}
	a, ok := broker.FindArg(args, k)
	if !ok {
		var names []string
		for _, x := range args {
			names = append(names, x.Name+"="+x.Kind)
		}
		return fmt.Errorf("%q is not understood%s; %s lines take type=, durable|transient and %s", k, Suggest(k, argNames(args)), what, strings.Join(names, ", "))
	}
	if !hasV || v == "" {
		return fmt.Errorf("%s needs a value (%s)", k, a.Kind)
	}
	// Unexpanded (lab check): ${delay:5}s is checked as 5s; a choice's
	// ${name} is checked when the run expands it.
	v = unexpanded(v)
	if varRe.MatchString(v) {
		return nil
	}
	_, err := broker.ArgValue(a, v, func(s string) string { return s })
	return err
}

func argNames(args []broker.Arg) []string {
	var out []string
	for _, a := range args {
		out = append(out, a.Name)
	}
	return out
}

// declArgs are a line's x-arguments, typed, exchange names namespaced.
func declArgs(r *Run, d declLine, args []broker.Arg) amqp.Table {
	var t amqp.Table
	for _, k := range d.order {
		if a, ok := broker.FindArg(args, k); ok {
			if t == nil {
				t = amqp.Table{}
			}
			t[k], _ = broker.ArgValue(a, d.opts[k], r.amqpName)
		}
	}
	return t
}

func parseDecl(s *lab.Step) ([]declLine, error) {
	var out []declLine
	for i, raw := range strings.Split(s.Body, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", s.File, s.Line+1+i)
		f := strings.Fields(line)
		d := declLine{what: f[0], opts: map[string]string{}}
		args := f[1:]
		need := 1
		if d.what == "bind" {
			need = 2
		}
		if d.what != "exchange" && d.what != "queue" && d.what != "bind" {
			return nil, fmt.Errorf("%s: declare line %q: start with exchange, queue or bind", where, line)
		}
		if len(args) < need {
			return nil, fmt.Errorf("%s: declare line %q: write exchange NAME, queue NAME or bind QUEUE EXCHANGE [key=K]", where, line)
		}
		d.name = args[0]
		if need == 2 {
			d.other = args[1]
		}
		// Options in the order written, so a message names the first
		// one that is wrong, the same one every run.
		for _, o := range args[need:] {
			k, v, hasV := strings.Cut(o, "=")
			if err := checkDeclOpt(d.what, k, v, hasV); err != nil {
				return nil, fmt.Errorf("%s: declare line %q: %v", where, line, err)
			}
			d.opts[k] = v
			d.order = append(d.order, k)
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: declare step declares nothing", s.Where())
	}
	return out, nil
}

// Declared are the queues and exchanges (article names) a declare step
// creates, for `lab clean`.
func Declared(s *lab.Step) (queues, exchanges []string) {
	lines, _ := parseDecl(s)
	for _, d := range lines {
		switch d.what {
		case "queue":
			queues = append(queues, d.name)
		case "exchange":
			exchanges = append(exchanges, d.name)
		}
	}
	return queues, exchanges
}

func (declareKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "error", "allow-error"); err != nil {
		return err
	}
	if s.Attrs["error"] != "" && s.Attrs["allow-error"] != "" {
		return fmt.Errorf("%s: declare takes error=CODE (must fail) or allow-error=CODE (may fail), not both", s.Where())
	}
	_, err := parseDecl(s)
	return err
}

func (declareKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	lines, _ := parseDecl(s)
	st := amqpOf(r)
	conn, err := st.conn(ctx, viaDirect)
	if err != nil {
		return fail("%v", err)
	}
	ch, err := conn.Channel()
	if err != nil {
		return fail("open a channel to declare on: %v", err)
	}
	defer ch.Close()
	res := lab.Result{Passed: true}
	var obs []string
	o := &Outcome{Source: "declare", Extra: map[string]string{}}
	for _, d := range lines {
		_, transient := d.opts["transient"]
		var shown string
		switch d.what {
		case "exchange":
			x := broker.Exchange{Name: r.amqpName(d.name), Type: d.opts["type"], Durable: !transient, Args: declArgs(r, d, broker.ExchangeArgs)}
			shown = x.String()
			err = broker.DeclareExchange(ch, x)
			r.Env.Nodes.note(nodesOf(r), "exchange", x.Name, "")
		case "queue":
			q := broker.Queue{Name: r.amqpName(d.name), Type: d.opts["type"], Durable: !transient, Extra: declArgs(r, d, broker.QueueArgs)}
			shown = q.String()
			err = broker.DeclareQueue(ch, q)
			r.Env.Nodes.note(nodesOf(r), "queue", q.Name, q.Type)
			o.Extra["queue"] = d.name
		case "bind":
			b := broker.Binding{Queue: r.amqpName(d.name), Exchange: r.amqpName(d.other), Key: d.opts["key"]}
			shown = b.String()
			err = broker.Bind(ch, b)
		}
		res.Sent = append(res.Sent, shown)
		if err != nil {
			var ae *amqp.Error
			if errors.As(err, &ae) {
				o.ErrCode, o.ErrText = strconv.Itoa(ae.Code), sayChanClosedBroker.F(amqpErrText(ae))
			} else {
				o.ErrCode, o.ErrText = "error", err.Error()
			}
			obs = append(obs, "✗ "+o.ErrText)
			if allowed := s.Attrs["allow-error"]; allowed != "" && allowed == o.ErrCode {
				obs = append(obs, sayRefusesAllowed.F())
			} else if want := s.Attrs["error"]; want != o.ErrCode {
				res.Passed = false
				res.Why = sayUnexpected.F(o.ErrText)
			}
			break
		}
		obs = append(obs, sayOkMark.F(shown))
	}
	if o.ErrCode == "" && s.Attrs["error"] != "" {
		res.Passed = false
		res.Why = sayWantedErrDeclare.F(s.Attrs["error"])
	}
	r.setOutcome(o)
	res.Observed = strings.Join(obs, "\n")
	return res
}

// publishKind publishes one message, as a publisher program would, and shows
// what came back: the confirm (or its absence), any basic.return, a channel
// error, and through the proxy the frames on the wire.
//
//	```publish channel=pub exchange=orders key=order.paid confirm mandatory id=event-001 [via=proxy] [timeout=3s] [transient]
//	{"event_id":"event-001","business_key":"order:42:paid","user_id":7,"amount":10}
//	```
//
// queue=NAME publishes through the default exchange straight to a queue.
// Messages are persistent unless transient. With confirm the channel is put
// in confirm mode and the step waits up to timeout (default 5s) for the
// confirm: the outcome's confirm fact is ack, nack, timeout (nothing came
// back), unknown (the channel or connection closed first) or none (no
// confirm mode). The step passes whatever the confirm says — expect checks
// it — but fails on a channel error unless error=CODE names it.
type publishKind struct{}

func (publishKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "channel", "via", "exchange", "key", "queue", "confirm", "mandatory", "id", "transient", "timeout", "error"); err != nil {
		return err
	}
	if err := checkBoolAttrs(s, "confirm", "mandatory", "transient"); err != nil {
		return err
	}
	if v := s.Attrs["via"]; v != "" && v != viaDirect && v != viaProxy {
		return fmt.Errorf("%s: via=%s: use direct or proxy", s.Where(), v)
	}
	if s.Attrs["queue"] != "" && (s.Attrs["exchange"] != "" || s.Attrs["key"] != "") {
		return fmt.Errorf("%s: publish takes queue= (default exchange) or exchange= and key=, not both", s.Where())
	}
	_, err := attrDuration(s, "timeout", 0)
	return err
}

func (publishKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	st := amqpOf(r)
	name := s.Attr("channel", "publisher")
	c, obs, err := st.channel(ctx, name, s.Attrs["via"])
	if err != nil {
		return fail("%v", err)
	}
	res := lab.Result{Passed: true}
	wantConfirm := boolAttr(s, "confirm")
	if wantConfirm && !c.confirm {
		if err := c.ch.Confirm(false); err != nil {
			return fail("confirm.select on channel %s: %v", name, err)
		}
		c.confirm = true
		res.Sent = append(res.Sent, "confirm.select (channel "+name+")")
	}
	exchange, key := r.amqpName(s.Attrs["exchange"]), s.Attrs["key"]
	if q := s.Attrs["queue"]; q != "" {
		exchange, key = "", r.amqpName(q)
	}
	mandatory := boolAttr(s, "mandatory")
	msg := amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent,
		MessageId: s.Attrs["id"], Timestamp: time.Now(), Body: []byte(strings.TrimSpace(s.Body))}
	mode := "persistent"
	if boolAttr(s, "transient") {
		msg.DeliveryMode, mode = amqp.Transient, "transient"
	}
	var mark int
	if st.proxy != nil {
		mark = len(st.proxy.Events())
	}
	c.drainReturns() // only returns of this publish count
	seq := c.ch.GetNextPublishSeqNo()
	shown := fmt.Sprintf("basic.publish exchange=%q routing-key=%q mandatory=%t message-id=%s %s", exchange, key, mandatory, msg.MessageId, mode)
	if c.confirm {
		shown = sayPublishSeq.F(shown, seq, name)
	}
	res.Sent = append(res.Sent, shown)
	o := &Outcome{Source: "publish " + name, Stmt: shown, Extra: map[string]string{"confirm": "none", "seq": strconv.FormatUint(seq, 10), "id": msg.MessageId}}
	if q := s.Attrs["queue"]; q != "" {
		o.Extra["queue"] = q
	}
	start := time.Now()
	dc, err := c.ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, mandatory, false, msg)
	if err != nil {
		return fail("publish on channel %s: %v", name, err)
	}
	obs = append(obs, saySentArrow.F(shown))
	confirm, confirmLine := "none", ""
	if dc != nil {
		timeout, _ := attrDuration(s, "timeout", 5*time.Second)
		wc, cancel := context.WithTimeout(ctx, timeout)
		ack, werr := dc.WaitContext(wc)
		cancel()
		took := since(start)
		switch {
		case werr != nil:
			confirm = "timeout"
			confirmLine = sayNoConfirmWithin.F(seq, timeout)
		case ack:
			confirm = "ack"
			confirmLine = sayAcked.F(seq, took)
		case c.closed(200 * time.Millisecond):
			// A closing channel resolves its pending confirms as ack=false.
			confirm = "unknown"
			confirmLine = sayNoConfirmClosed.F(name, c.why())
		default:
			confirm = "nack"
			confirmLine = sayNacked.F(seq, took)
		}
	} else if !c.closed(0) {
		// No confirm to wait for: a round trip makes any return or channel
		// error of this publish arrive before the step ends.
		_ = c.roundTrip()
		confirmLine = sayNoConfirmMode.F()
	}
	o.Extra["confirm"] = confirm
	// The library hands a basic.return over before it resolves the confirm
	// that follows it on the wire, so every return of this publish is here.
	rets := c.drainReturns()
	for _, ret := range rets {
		obs = append(obs, sayReturned.F(ret.ReplyCode, ret.ReplyText, ret.Exchange, ret.RoutingKey, ret.MessageId))
	}
	obs = append(obs, confirmLine)
	o.Extra["returned"] = strconv.Itoa(len(rets))
	if c.closed(50 * time.Millisecond) {
		o.ErrCode, o.ErrText = c.closeOutcome()
		obs = append(obs, sayNotifyClose.F(durText(c.closedAt.Sub(start)), o.ErrText))
	} else {
		switch confirm {
		case "nack", "timeout", "unknown":
			o.ErrCode, o.ErrText = confirm, "confirm: "+confirm
		}
	}
	st.mu.Lock()
	switch confirm {
	case "ack":
		st.seen.Acked++
	case "nack":
		st.seen.Nacked++
	case "timeout":
		st.seen.Timeouts++
	case "unknown":
		st.seen.Unknown++
	}
	st.seen.Returned += len(rets)
	p := st.proxy
	st.mu.Unlock()
	if p != nil && c.via == viaProxy {
		evs := p.Events()
		if mark > len(evs) {
			mark = 0
		}
		obs = append(obs, proxyEvents(evs[mark:])...)
	}
	if want := s.Attrs["error"]; o.ErrCode != "" && o.ErrCode != "nack" && o.ErrCode != "timeout" && o.ErrCode != "unknown" && o.ErrCode != want {
		res.Passed, res.Why = false, sayUnexpected.F(o.ErrText)
	} else if want != "" && o.ErrCode != want {
		res.Passed, res.Why = false, "wanted error "+want+", got "+orNone(o.ErrText)
	}
	r.setOutcome(o)
	res.Observed = strings.Join(obs, "\n")
	return res
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// since is how long ago start was, as the learner reads it.
func since(start time.Time) string { return durText(time.Since(start)) }

func durText(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

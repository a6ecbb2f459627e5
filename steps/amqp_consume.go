package steps

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/plain"
)

// consumeKind receives deliveries on a named channel and shows each with its
// delivery tag and redelivered flag. They stay unacknowledged until an ack
// or nack step settles them, or their channel closes (the broker then
// requeues them).
//
//	```consume channel=A queue=orders count=2 [up-to] [mode=deliver|get] [prefetch=N] [timeout=5s]
//	```
//
// mode=deliver (default) registers a consumer (basic.consume) on the first
// step and shows deliveries as the broker pushes them; mode=get pulls with
// basic.get. The step fails when fewer than count arrive within timeout
// (none is a failure too), unless up-to says fewer may come; expect
// checks them (delivered N, redelivered true, tags 1 2). A channel
// error fails it unless error=CODE names it: a quorum queue without a
// majority holds basic.consume, then refuses it with 541: error=541,timeout
// (timeout: no answer within the step's timeout).
type consumeKind struct{}

func (consumeKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "channel", "queue", "count", "up-to", "mode", "prefetch", "timeout", "via", "error", "offset"); err != nil {
		return err
	}
	if v, ok := s.Attrs["offset"]; ok {
		if _, err := streamOffset(v, time.Now()); err != nil {
			return fmt.Errorf("%s: offset=%s: %v", s.Where(), v, err)
		}
		if s.Attr("mode", "deliver") != "deliver" || s.Attrs["prefetch"] == "" {
			return errors.New(sayOffsetNeeds.F(s.Where()))
		}
	}
	if err := requireAttrs(s, "queue"); err != nil {
		return err
	}
	for _, k := range []string{"count", "prefetch"} {
		if v, ok := s.Attrs[k]; ok {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return fmt.Errorf("%s: %s=%q is not a whole number", s.Where(), k, v)
			}
		}
	}
	if m := s.Attr("mode", "deliver"); m != "deliver" && m != "get" {
		return fmt.Errorf("%s: mode=%s: use deliver or get", s.Where(), m)
	}
	_, err := attrDuration(s, "timeout", 0)
	return err
}

func (consumeKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	st := amqpOf(r)
	name := s.Attr("channel", "consumer")
	c, obs, err := st.channel(ctx, name, s.Attrs["via"])
	if err != nil {
		return fail("%v", err)
	}
	article := s.Attrs["queue"]
	queue := r.amqpName(article)
	count, _ := strconv.Atoi(s.Attr("count", "1"))
	timeout, _ := attrDuration(s, "timeout", 5*time.Second)
	res := lab.Result{Passed: true}
	start := time.Now()
	refused := func(call string, err error) lab.Result {
		return st.channelFailure(r, c, s, res, obs, call, err, start)
	}
	var got []amqp.Delivery
	uncapped := false // this step subscribed with no prefetch cap
	if s.Attr("mode", "deliver") == "get" {
		res.Sent = append(res.Sent, fmt.Sprintf("basic.get queue=%s no-ack=false (×%d, channel %s)", queue, count, name))
		for len(got) < count {
			d, ok, err := c.ch.Get(queue, false)
			if err != nil {
				return refused("basic.get", err)
			}
			if !ok {
				obs = append(obs, "← basic.get-empty: the queue has no ready message")
				break
			}
			st.mu.Lock()
			c.held[d.DeliveryTag] = queue
			c.lastTag = d.DeliveryTag
			st.mu.Unlock()
			broker.Hold(queue, 1)
			got = append(got, d)
		}
	} else {
		_, consuming := c.consuming[queue]
		if _, ok := s.Attrs["offset"]; ok && consuming {
			// Where a stream consumer starts is said once, when it starts:
			// ignored here, the step would read on from where it was.
			return fail("%s", sayOffsetConsuming.F(name, article))
		}
		if !consuming {
			if v, ok := s.Attrs["prefetch"]; ok {
				c.prefetch, _ = strconv.Atoi(v)
				res.Sent = append(res.Sent, fmt.Sprintf("basic.qos prefetch-count=%d (channel %s)", c.prefetch, name))
				if err := c.ch.Qos(c.prefetch, 0, false); err != nil {
					return refused("basic.qos", err)
				}
			}
			tag := "lab-" + name
			var args amqp.Table
			sent := fmt.Sprintf("basic.consume queue=%s consumer-tag=%s no-ack=false (channel %s)", queue, tag, name)
			if v, ok := s.Attrs["offset"]; ok {
				off, _ := streamOffset(v, time.Now())
				args = amqp.Table{"x-stream-offset": off}
				sent = fmt.Sprintf("basic.consume queue=%s consumer-tag=%s no-ack=false x-stream-offset=%v (channel %s)", queue, tag, offText(off), name)
			}
			res.Sent = append(res.Sent, sent)
			start = time.Now()
			ds, err := st.subscribe(c, queue, tag, timeout, args)
			if err != nil {
				return refused("basic.consume", err)
			}
			c.consuming[queue] = tag
			go st.collect(c, queue, ds)
			uncapped = c.prefetch == 0
		}
		deadline := time.NewTimer(timeout)
		defer deadline.Stop()
	wait:
		for {
			st.mu.Lock()
			n := len(c.inbox)
			arrived := c.arrived
			if n >= count {
				got, c.inbox = append(got, c.inbox[:count]...), c.inbox[count:]
				st.mu.Unlock()
				break
			}
			st.mu.Unlock()
			select {
			case <-arrived:
			case <-c.done:
				st.mu.Lock()
				got, c.inbox = append(got, c.inbox...), nil
				st.mu.Unlock()
				break wait
			case <-deadline.C:
				st.mu.Lock()
				got, c.inbox = append(got, c.inbox...), nil
				st.mu.Unlock()
				break wait
			case <-ctx.Done():
				return fail("interrupted")
			}
		}
	}
	o := &Outcome{Source: "consume " + name, Columns: []string{"delivery_tag", "redelivered", "message_id", "headers", "body"},
		Extra: map[string]string{"queue": article}}
	red := 0
	var tags []string
	for _, d := range got {
		hs := deliveryHeaders(r, d)
		o.Rows = append(o.Rows, []string{strconv.FormatUint(d.DeliveryTag, 10), strconv.FormatBool(d.Redelivered), d.MessageId, hs.text(), string(d.Body)})
		line := fmt.Sprintf("← delivery tag=%d redelivered=%t message-id=%s routing-key=%s body=%s (channel %s)", d.DeliveryTag, d.Redelivered, d.MessageId, d.RoutingKey, d.Body, name)
		if !d.Timestamp.IsZero() {
			// The publisher's timestamp (whole seconds in AMQP): how long the
			// message waited, the figure a backlog alert watches.
			line += "\n" + sayPublishedAgoLine.F(time.Since(d.Timestamp).Truncate(time.Second))
		}
		if t := hs.text(); t != "" {
			line += "\n    headers: " + t
		}
		obs = append(obs, line)
		for k, v := range hs {
			o.Extra["header "+k] = v // the last delivery's, for expect header
		}
		tags = append(tags, strconv.FormatUint(d.DeliveryTag, 10))
		if d.Redelivered {
			red++
		}
	}
	if len(got) < count {
		obs = append(obs, sayArrivedWithin.F(len(got), count, timeout))
		if _, upTo := s.Attrs["up-to"]; !upTo && s.Attrs["error"] == "" {
			res.Passed = false
			res.Why = sayArrivedWithinWhy.F(len(got), count, timeout)
		}
	}
	if c.closed(0) {
		obs = append(obs, sayChannelClosed.F(name, c.why()))
	}
	o.Extra["delivered"] = strconv.Itoa(len(got))
	o.Extra["redelivered"] = strconv.Itoa(red)
	o.Extra["tags"] = strings.Join(tags, " ")
	st.mu.Lock()
	st.seen.Delivered += len(got)
	st.seen.Redelivered += red
	st.mu.Unlock()
	if want := s.Attrs["error"]; want != "" {
		res.Passed = false
		call := "basic.consume"
		if s.Attr("mode", "deliver") == "get" {
			call = "basic.get"
		}
		res.Why = sayBrokerAnswered.F(want, call)
	}
	if uncapped && !c.closed(0) {
		// Said once, where it starts: a worker started later on the same
		// queue got nothing, and nothing said why.
		obs = append(obs, sayNoPrefetch.F(name, article, article))
	}
	r.setOutcome(o)
	res.Observed = strings.Join(obs, "\n")
	return res
}

// errNoAnswer is a synchronous call the broker has not answered in time.
var errNoAnswer = errors.New("no answer")

// subscribe is basic.consume, given up on after timeout: a quorum queue
// without a majority holds the call for about a minute (RabbitMQ 3.10 and
// 4.3) before it answers 541. A channel given up on is forgotten, so the
// next step naming it opens a new one, and closed in the background (the
// close waits behind the held call).
func (st *amqpState) subscribe(c *amqpChan, queue, tag string, timeout time.Duration, args amqp.Table) (<-chan amqp.Delivery, error) {
	type answer struct {
		ds  <-chan amqp.Delivery
		err error
	}
	done := make(chan answer, 1)
	go func() {
		ds, err := c.ch.Consume(queue, tag, false, false, false, false, args)
		done <- answer{ds, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a := <-done:
		return a.ds, a.err
	case <-c.done:
		return nil, amqp.ErrClosed
	case <-t.C:
	}
	st.mu.Lock()
	if st.chans[c.name] == c {
		delete(st.chans, c.name)
	}
	st.mu.Unlock()
	go c.ch.Close()
	return nil, fmt.Errorf("%w within %s", errNoAnswer, durText(timeout))
}

// collect moves pushed deliveries into the channel's inbox; they count as
// held (unacked) from the moment the broker sent them.
func (st *amqpState) collect(c *amqpChan, queue string, ds <-chan amqp.Delivery) {
	for d := range ds {
		st.mu.Lock()
		select {
		case <-c.done:
			st.mu.Unlock()
			continue // the channel ended: the broker requeued it
		default:
		}
		c.inbox = append(c.inbox, d)
		c.held[d.DeliveryTag] = queue
		c.lastTag = d.DeliveryTag
		close(c.arrived)
		c.arrived = make(chan struct{})
		st.mu.Unlock()
		broker.Hold(queue, 1)
	}
}

// channelFailure reports a call that failed because the broker closed the
// channel, with the broker's reason and how long it took to answer. It
// passes when the step's error=CODE names the code; nothing was delivered.
func (st *amqpState) channelFailure(r *Run, c *amqpChan, s *lab.Step, res lab.Result, obs []string, call string, err error, start time.Time) lab.Result {
	o := &Outcome{Source: "channel " + c.name, Extra: map[string]string{"delivered": "0", "redelivered": "0", "queue": s.Attrs["queue"]}}
	took := durText(time.Since(start))
	if errors.Is(err, errNoAnswer) {
		o.ErrCode, o.ErrText = "timeout", sayGaveUp.F(call, c.name, err, c.name)
	} else if c.closed(time.Second) {
		o.ErrCode, o.ErrText = c.closeOutcome()
	} else {
		o.ErrCode, o.ErrText = "error", sayOnChannel.F(call, c.name, err)
	}
	r.setOutcome(o)
	if want := s.Attrs["error"]; want != "" && slices.Contains(strings.Split(want, ","), o.ErrCode) {
		line := sayRefusedAfter.F(call, took, o.ErrText)
		if o.ErrCode == "timeout" {
			line = "← " + o.ErrText
		}
		res.Observed = strings.Join(append(obs, line), "\n")
		return res
	}
	res.Passed = false
	res.Why = o.ErrText
	if want := s.Attrs["error"]; want != "" {
		res.Why = "wanted error " + want + ", got " + o.ErrText
	}
	res.Observed = strings.Join(append(obs, fmt.Sprintf("✗ %s after %s: %s", call, took, o.ErrText)), "\n")
	return res
}

// headers are the delivery facts a lesson checks with `expect header NAME
// VALUE`: x-delivery-count (quorum queues), x-acquired-count (RabbitMQ 4.x),
// the newest x-death entry's count, reason, queue and exchange (article
// names), x-first-death-reason, the whole x-death history ("orders.wait
// expired 2, orders rejected 2", newest first), and the routing key the
// message travelled with (dead-lettering keeps it unless the queue sets
// x-dead-letter-routing-key).
type headers map[string]string

// headerNames are the names `expect header` knows.
var headerNames = []string{"routing-key", "x-delivery-count", "x-acquired-count", "x-death.count", "x-death.reason", "x-death.queue", "x-death.exchange", "x-first-death-reason", "x-death"}

// brokerHeaders are the headers the broker sets, read above; every other
// header is the application's (the redrive's x-redriven, a publisher's
// own), shown and checked as sent.
var brokerHeaders = []string{"x-delivery-count", "x-acquired-count", "x-stream-offset", "x-death", "x-first-death-reason", "x-first-death-queue", "x-first-death-exchange", "x-last-death-reason", "x-last-death-queue", "x-last-death-exchange"}

// headerName is a name expect header may check: one the lab reads, or an
// application header's, unless it is a near miss of one the lab reads (a
// typo of x-delivery-count must not check a header nobody sets).
func headerName(name string) error {
	if slices.Contains(headerNames, name) {
		return nil
	}
	if sug := Suggest(name, headerNames); sug != "" || !appHeaderRe.MatchString(name) {
		return fmt.Errorf("header %s: the lab reads %s and the application's own headers%s", name, strings.Join(headerNames, ", "), sug)
	}
	return nil
}

var appHeaderRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func deliveryHeaders(r *Run, d amqp.Delivery) headers {
	h := headers{}
	article := func(v any) string {
		s := fmt.Sprint(v)
		if ns := r.Env.Svc.Names.NS; ns != "" {
			s = strings.TrimSuffix(s, "_"+ns)
		}
		return s
	}
	h["routing-key"] = article(d.RoutingKey)
	if v, ok := d.Headers["x-delivery-count"]; ok {
		h["x-delivery-count"] = fmt.Sprint(v)
	}
	if ds := broker.Deaths(d.Headers); len(ds) > 0 {
		h["x-death"] = broker.DeathsText(ds, func(q string) string { return article(q) })
	}
	if v, ok := d.Headers["x-acquired-count"]; ok { // RabbitMQ 4.x: every delivery, nacks included
		h["x-acquired-count"] = fmt.Sprint(v)
	}
	if v, ok := d.Headers["x-first-death-reason"]; ok {
		h["x-first-death-reason"] = fmt.Sprint(v)
	}
	if v, ok := d.Headers["x-stream-offset"]; ok { // a stream's: where in the log this message is
		h["x-stream-offset"] = fmt.Sprint(v)
	}
	for k, v := range d.Headers {
		if !slices.Contains(brokerHeaders, k) && appHeaderRe.MatchString(k) {
			h[k] = plainValue(v)
		}
	}
	if deaths, ok := d.Headers["x-death"].([]any); ok && len(deaths) > 0 {
		if t, ok := deaths[0].(amqp.Table); ok {
			h["x-death.count"] = fmt.Sprint(t["count"])
			h["x-death.reason"] = fmt.Sprint(t["reason"])
			h["x-death.queue"] = article(t["queue"])
			if x := article(t["exchange"]); x != "" {
				h["x-death.exchange"] = x
			} else {
				h["x-death.exchange"] = `""` // the default exchange
			}
		}
	}
	return h
}

// text is the headers in a stable order, as the learner reads them: the
// x-death history whole (its newest entry's fields are in it), the
// routing key on the delivery's own line.
func (h headers) text() string {
	var out []string
	for _, k := range []string{"x-delivery-count", "x-acquired-count", "x-first-death-reason", "x-death"} {
		if v, ok := h[k]; ok {
			if k == "x-death" {
				v = "[" + v + "]"
			}
			out = append(out, k+"="+v)
		}
	}
	var app []string
	for k := range h {
		if !slices.Contains(headerNames, k) {
			app = append(app, k)
		}
	}
	slices.Sort(app)
	for _, k := range app {
		out = append(out, k+"="+h[k])
	}
	return strings.Join(out, " ")
}

// plainValue is an application header's value as one line of plain text,
// at most 200 bytes: it came from whoever published.
func plainValue(v any) string {
	return plain.Line(fmt.Sprint(v), 200)
}

// verbHeader is `expect header NAME VALUE` on the last delivery of a
// consume step; `not header NAME` passes when the delivery has none.
func verbHeader(_ *Run, o *Outcome, arg string) error {
	name, want, _ := strings.Cut(arg, " ")
	want = strings.TrimSpace(want)
	if err := headerName(name); err != nil {
		return cannot("%v", err)
	}
	if _, ok := o.Extra["delivered"]; !ok {
		return cannot("the step checked is not a consume")
	}
	got, ok := o.Extra["header "+name]
	if !ok {
		return fmt.Errorf("the last delivery has no %s", name)
	}
	if want != "" && got != want {
		return fmt.Errorf("%s is %s", name, got)
	}
	return nil
}

// streamOffset is where a stream consumer starts (x-stream-offset): first,
// last (the last chunk), next (only what comes after), a whole number (that
// offset in the log), or -D (what was written since D ago: a timestamp).
func streamOffset(v string, now time.Time) (any, error) {
	switch v {
	case "first", "last", "next":
		return v, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return n, nil
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(v, "-")); err == nil && strings.HasPrefix(v, "-") && d > 0 {
		return now.Add(-d).Truncate(time.Second), nil
	}
	return nil, errors.New(sayOffsetValue.F())
}

// offText is an offset as basic.consume sent it.
func offText(off any) string {
	if t, ok := off.(time.Time); ok {
		return "timestamp " + t.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(off)
}

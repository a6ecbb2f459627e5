package steps

// What expect and the ledger read of the broker part: the verbs (confirm,
// returned, delivered, ready, unavailable, …) and the broker: and amqp:
// ledger sources.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
)

func init() {
	registerResetHook(amqpReset)
	registerSource("broker", brokerSource)
	registerSource("amqp", amqpSource)
	registerVerb("confirm", verbConfirm)
	registerVerb("returned", verbExtraInt("returned"))
	registerVerb("delivered", verbExtraInt("delivered"))
	registerVerb("redelivered", verbRedelivered)
	registerVerb("tags", verbTags)
	registerVerb("header", verbHeader)
	registerVerb("ready", verbQueue("ready"))
	registerVerb("unacked", verbQueue("unacked"))
	registerVerb("consumers", verbQueue("consumers"))
	registerVerb("unavailable", verbUnavailable)
}

// verbUnavailable is "unavailable QUEUE": the queue exists but the broker
// cannot serve it now (a cluster's 404 for a queue whose node is down).
func verbUnavailable(r *Run, o *Outcome, arg string) error {
	f := strings.Fields(arg)
	if len(f) != 1 {
		return cannot("write unavailable QUEUE")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	qs, err := amqpOf(r).queueStat(ctx, f[0])
	if err != nil {
		return &unevaluable{err}
	}
	if r.replacing != nil && qs.Exists {
		// The other answer: served where it was down, down where served.
		if r.replacing.negated {
			qs.Down = "replaced: no node serves it"
		} else {
			qs.Down = ""
		}
	}
	switch {
	case qs.Down != "":
		return nil
	case !qs.Exists:
		return cannot("queue %s does not exist at all", qs.Name)
	}
	return fmt.Errorf("queue %s is available: ready %d", qs.Name, qs.Ready)
}

// brokerSource is the ledger's "broker:" prefix: a queue's state at the
// broker at this moment.
//
//	published: broker: ready orders      ready messages (a stream: its length)
//	broker: consumers orders             consumers attached
//	broker: unacked orders               deliveries the lab's channels hold unacked
//	broker: messages orders              ready + unacked
//	broker: unavailable orders           what it held when last read, if no node serves it now
//	broker: holds orders event-7         ready messages with message id event-7
func brokerSource(ctx context.Context, r *Run, _ *lab.Step, expr string) (int, error) {
	f := strings.Fields(expr)
	if len(f) == 3 && f[0] == "holds" {
		// The messages of QUEUE with message id ID: a message still
		// waiting, by its id, not by how many the queue holds.
		return amqpOf(r).reader.Holds(ctx, r.amqpName(f[1]), f[2], 1000)
	}
	if len(f) != 2 {
		return 0, fmt.Errorf("write broker: ready|unacked|consumers|messages|unavailable QUEUE, or broker: holds QUEUE MESSAGE-ID")
	}
	qs, err := amqpOf(r).queueStat(ctx, f[1])
	if err != nil {
		return 0, err
	}
	// A queue that does not exist is a misspelt or undeclared name, not a
	// count of 0: it would make an unsafe ledger's "lost" hold whatever
	// happened. (A queue no running node serves reads as 0: its messages
	// are not available; lesson 19 counts them so.)
	if !qs.Exists {
		return 0, fmt.Errorf("broker: queue %s does not exist (misspelt, or not declared yet?)", qs.Name)
	}
	switch f[0] {
	case "unavailable":
		// What the queue held at the lab's last read, if no running node
		// serves it now: there, not readable, not lost.
		if qs.Down == "" {
			return 0, nil
		}
		n, ok := broker.LastSeen(qs.Name)
		if !ok {
			return 0, fmt.Errorf("broker: queue %s is unavailable (%s) and the lab never read it while it was available: nothing to count", qs.Name, qs.Down)
		}
		return n, nil
	case "ready":
		return qs.Ready, nil
	case "unacked":
		return broker.Held(qs.Name), nil
	case "consumers":
		return qs.Consumers, nil
	case "messages":
		return qs.Ready + broker.Held(qs.Name), nil
	}
	return 0, fmt.Errorf("broker: %q: use ready, unacked, consumers, messages, unavailable or holds", f[0])
}

// amqpSource is the ledger's "amqp:" prefix: what the lab's own channels saw
// during this run, and what crossed the fault proxy.
//
//	amqp: acked | nacked | timeouts | unknown | returned | delivered | redelivered
//	amqp: wire publishes | wire dropped-confirms
func amqpSource(_ context.Context, r *Run, _ *lab.Step, expr string) (int, error) {
	st := amqpOf(r)
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.seen
	switch expr {
	case "acked":
		return s.Acked, nil
	case "nacked":
		return s.Nacked, nil
	case "timeouts":
		return s.Timeouts, nil
	case "unknown":
		return s.Unknown, nil
	case "returned":
		return s.Returned, nil
	case "delivered":
		return s.Delivered, nil
	case "redelivered":
		return s.Redelivered, nil
	case "wire publishes", "wire dropped-confirms":
		if st.proxy == nil {
			return 0, nil
		}
		c := st.proxy.Counts()
		if expr == "wire publishes" {
			return c.Publishes, nil
		}
		return c.ConfirmsDropped, nil
	}
	return 0, fmt.Errorf("amqp: %q: use acked, nacked, timeouts, unknown, returned, delivered, redelivered, wire publishes or wire dropped-confirms", expr)
}

func verbConfirm(_ *Run, o *Outcome, arg string) error {
	got, ok := o.Extra["confirm"]
	if !ok {
		return cannot("the step checked is not a publish")
	}
	if got != arg {
		return fmt.Errorf("confirm was %s", got)
	}
	return nil
}

func verbExtraInt(key string) verbFunc {
	return func(_ *Run, o *Outcome, arg string) error {
		got, ok := o.Extra[key]
		if !ok {
			return cannot("the step checked reports no %s count", key)
		}
		if got != strings.TrimSpace(arg) {
			return fmt.Errorf("%s %s", key, got)
		}
		return nil
	}
}

// verbRedelivered: "redelivered true" (every delivery shown carried the
// flag), "redelivered false" (none did) or "redelivered N" (how many).
func verbRedelivered(_ *Run, o *Outcome, arg string) error {
	red, ok1 := o.Extra["redelivered"]
	del, ok2 := o.Extra["delivered"]
	if !ok1 || !ok2 {
		return cannot("the step checked is not a consume")
	}
	switch arg {
	case "true":
		if red != del || del == "0" {
			return fmt.Errorf("%s of %s deliveries redelivered", red, del)
		}
	case "false":
		if red != "0" {
			return fmt.Errorf("%s of %s deliveries redelivered", red, del)
		}
	default:
		if red != arg {
			return fmt.Errorf("%s of %s deliveries redelivered", red, del)
		}
	}
	return nil
}

func verbTags(_ *Run, o *Outcome, arg string) error {
	got, ok := o.Extra["tags"]
	if !ok {
		return cannot("the step checked is not a consume")
	}
	if got != strings.Join(strings.Fields(arg), " ") {
		return fmt.Errorf("tags are %s", got)
	}
	return nil
}

// verbQueue reads a queue figure at the broker when the expectation runs:
// "ready 2" (the queue of the step checked) or "ready orders 2". unacked is
// what the lab's own channels hold: exact, where the management API's figure
// lags by its statistics interval.
func verbQueue(what string) verbFunc {
	return func(r *Run, o *Outcome, arg string) error {
		f := strings.Fields(arg)
		q := o.Extra["queue"]
		switch len(f) {
		case 1:
			if q == "" {
				return cannot("name the queue: %s QUEUE N", what)
			}
		case 2:
			q = f[0]
		default:
			return cannot("write %s N or %s QUEUE N", what, what)
		}
		want, err := strconv.Atoi(f[len(f)-1])
		if err != nil {
			return cannot("%s wants a number", what)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		qs, err := amqpOf(r).queueStat(ctx, q)
		if err != nil {
			return &unevaluable{err}
		}
		if !qs.Exists {
			return cannot("queue %s does not exist", qs.Name)
		}
		if qs.Down != "" {
			return fmt.Errorf("queue %s is unavailable: %s", qs.Name, qs.Down)
		}
		got := map[string]int{"ready": qs.Ready, "consumers": qs.Consumers, "unacked": broker.Held(qs.Name)}[what]
		got = r.replacedCount(got, want)
		if got != want {
			return fmt.Errorf("%s has %s %d", qs.Name, what, got)
		}
		return nil
	}
}

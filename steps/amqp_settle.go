package steps

// Settling what a consume step received: ack and nack of any tag, and a
// clean close of a channel or connection.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
)

// ackKind settles deliveries on a named channel: basic.ack, basic.nack or
// basic.reject (requeue=true by default; reject settles one tag, never
// multiple). A quorum queue on RabbitMQ 4.3 counts a reject with requeue
// toward its delivery limit and a nack with requeue not at all: the two
// are different steps so a lesson can show both. The tag is a number — any number, including one
// another channel received, which the broker answers by closing this channel
// with 406 PRECONDITION_FAILED — or last (the channel's latest delivery).
//
//	```ack channel=B tag=1 [multiple] [error=406]
//	```
//
// amqp091-go's Ack returns before the broker has looked at the ack, so the
// step then makes a synchronous round trip on the channel: a refused ack
// has closed the channel by the time the answer would come, and NotifyClose
// reports why, as it happened. A channel error fails the step unless
// error=CODE names it.
type ackKind struct{ verb string }

func (k ackKind) Check(s *lab.Step) error {
	allowed := []string{"channel", "tag", "error"}
	switch k.verb {
	case "ack":
		allowed = append(allowed, "multiple")
	case "nack":
		allowed = append(allowed, "multiple", "requeue")
	case "reject":
		allowed = append(allowed, "requeue")
	}
	if err := checkAttrs(s, allowed...); err != nil {
		return err
	}
	if err := checkBoolAttrs(s, "multiple", "requeue"); err != nil {
		return err
	}
	if err := requireAttrs(s, "channel", "tag"); err != nil {
		return err
	}
	if t := s.Attrs["tag"]; t != "last" {
		if _, err := strconv.ParseUint(t, 10, 64); err != nil {
			return fmt.Errorf("%s: tag=%q: write a delivery tag number or last", s.Where(), t)
		}
	}
	return nil
}

func (k ackKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	st := amqpOf(r)
	name := s.Attrs["channel"]
	c, obs, err := st.channel(ctx, name, "")
	if err != nil {
		return fail("%v", err)
	}
	res := lab.Result{Passed: true}
	var tag uint64
	if s.Attrs["tag"] == "last" {
		st.mu.Lock()
		tag = c.lastTag
		st.mu.Unlock()
		if tag == 0 {
			return fail("channel %s has received no delivery yet: tag=last has nothing to settle", name)
		}
	} else {
		tag, _ = strconv.ParseUint(s.Attrs["tag"], 10, 64)
	}
	multiple := boolAttr(s, "multiple")
	requeue := s.Attr("requeue", "true") != "false" && s.Attr("requeue", "true") != "no"
	shown := fmt.Sprintf("basic.%s delivery-tag=%d multiple=%t", k.verb, tag, multiple)
	if k.verb == "reject" {
		shown = fmt.Sprintf("basic.reject delivery-tag=%d", tag)
	}
	if k.verb != "ack" {
		shown += fmt.Sprintf(" requeue=%t", requeue)
	}
	shown += " (channel " + name + ")"
	res.Sent = append(res.Sent, shown)
	st.mu.Lock()
	heldBefore := len(c.held)
	st.mu.Unlock()
	start := time.Now()
	switch k.verb {
	case "ack":
		err = c.ch.Ack(tag, multiple)
	case "reject":
		err = c.ch.Reject(tag, requeue)
	default:
		err = c.ch.Nack(tag, multiple, requeue)
	}
	o := &Outcome{Source: k.verb + " " + name, Stmt: shown, Extra: map[string]string{}}
	if err != nil {
		o.ErrCode, o.ErrText = "error", sayOnChannel.F(k.verb, name, err)
		obs = append(obs, "✗ "+o.ErrText)
	} else {
		obs = append(obs, sayLibraryNil.F(shown))
		rtErr := c.roundTrip()
		if rtErr != nil && c.closed(2*time.Second) {
			o.ErrCode, o.ErrText = c.closeOutcome()
			obs = append(obs, sayNotifyClose.F(durText(c.closedAt.Sub(start)), o.ErrText))
			if heldBefore > 0 {
				obs = append(obs, sayPutsBack.F(name, heldBefore, pluralY(heldBefore)))
			}
		} else if rtErr != nil {
			o.ErrCode, o.ErrText = "error", sayChannelErr.F(name, rtErr)
			obs = append(obs, "✗ "+o.ErrText)
		} else {
			settled := st.settle(c, tag, multiple)
			verb := sayAckDeletes.F()
			if k.verb != "ack" && requeue {
				verb = sayRequeuePutsBack.F()
			} else if k.verb != "ack" {
				verb = sayRejectDrops.F()
			}
			obs = append(obs, sayAcceptedQos.F(verb, pluralS(len(settled)), joinTags(settled)))
			o.Extra["settled"] = strconv.Itoa(len(settled))
			o.Extra["tags"] = joinTags(settled)
		}
	}
	if want := s.Attrs["error"]; o.ErrCode != want {
		res.Passed = false
		if want == "" {
			res.Why = sayUnexpected.F(o.ErrText)
		} else {
			res.Why = "wanted error " + want + ", got " + orNone(o.ErrText)
		}
	}
	r.setOutcome(o)
	res.Observed = strings.Join(obs, "\n")
	return res
}

// settle forgets the deliveries an accepted ack or nack covered.
func (st *amqpState) settle(c *amqpChan, tag uint64, multiple bool) []uint64 {
	st.mu.Lock()
	defer st.mu.Unlock()
	var out []uint64
	for _, t := range sortedKeys(c.held) {
		if t == tag || (multiple && t < tag) {
			broker.Hold(c.held[t], -1)
			delete(c.held, t)
			out = append(out, t)
		}
	}
	return out
}

func joinTags(ts []uint64) string {
	var s []string
	for _, t := range ts {
		s = append(s, strconv.FormatUint(t, 10))
	}
	return strings.Join(s, " ")
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// closeKind closes a channel or a connection the way a program that exits
// cleanly would; the broker requeues what it held unacked.
//
//	```close channel=A
//	```
//	```close connection=proxy
//	```
type closeKind struct{}

func (closeKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "channel", "connection"); err != nil {
		return err
	}
	if (s.Attrs["channel"] == "") == (s.Attrs["connection"] == "") {
		return fmt.Errorf("%s: close needs channel=NAME or connection=direct|proxy", s.Where())
	}
	return nil
}

func (closeKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	st := amqpOf(r)
	var chans []*amqpChan
	st.mu.Lock()
	for _, c := range st.chans {
		if c.name == s.Attrs["channel"] || (s.Attrs["connection"] != "" && c.via == s.Attrs["connection"]) {
			chans = append(chans, c)
		}
	}
	conn := st.conns[s.Attrs["connection"]]
	st.mu.Unlock()
	res := lab.Result{Passed: true}
	var obs []string
	held := 0
	for _, c := range chans {
		st.mu.Lock()
		held += len(c.held)
		st.mu.Unlock()
	}
	if name := s.Attrs["channel"]; name != "" {
		if len(chans) == 0 {
			return fail("no channel named %s is open in this lesson", name)
		}
		res.Sent = append(res.Sent, "channel.close (channel "+name+")")
		_ = chans[0].ch.Close()
	} else {
		if conn == nil {
			return fail("no %s connection is open in this lesson", s.Attrs["connection"])
		}
		res.Sent = append(res.Sent, "connection.close ("+s.Attrs["connection"]+")")
		_ = conn.Close()
	}
	for _, c := range chans {
		c.closed(2 * time.Second)
	}
	if held > 0 {
		obs = append(obs, sayClosedPutsBack.F(held, pluralY(held)))
	} else {
		obs = append(obs, sayNothingHeld.F())
	}
	r.setOutcome(&Outcome{Source: "close", Extra: map[string]string{"requeued": strconv.Itoa(held)}})
	res.Observed = strings.Join(obs, "\n")
	return res
}

func pluralY(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}

// Package redrive moves messages parked in one queue back to another after
// a fix, the way an operator's redrive (or a shovel) does: basic.get from
// the parking queue, publish a copy to the work queue with a confirm, and
// only then ack the parked one. It is a relay like any other: dying between
// the publish and the ack leaves the parked copy to be moved again, so the
// work queue gets the message twice and the consumer's key must absorb it.
//
// It runs as `lab worker redrive`:
//
//	lab worker redrive [--name N] [--pause-at p1,p2] --from PARKED --to QUEUE [--count N]
//
// The copy keeps the message id, body and headers except the broker's
// dead-letter history (x-death, x-first-death-*, x-last-death-*): a
// consumer that caps retries by that history would park it again at once.
// The copy carries x-redriven: how many times it was moved back.
package redrive

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Points are the pause points, in the order a message meets them.
var Points = []string{"after-get", "after-publish", "after-confirm", "after-ack"}

// Options are the redrive's flags.
type Options struct {
	From, To string // article names; the namespace is added
	Count    int    // at most this many (0: until the parking queue is empty)
	Timeout  time.Duration
}

// ParseArgs reads the flags (the worker layer has taken --name and
// --pause-at off already).
func ParseArgs(args []string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("lab worker redrive", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.From, "from", "", "the parking queue to move messages out of (article name)")
	fs.StringVar(&o.To, "to", "", "the queue to move them back to, through the default exchange (article name)")
	fs.IntVar(&o.Count, "count", 0, "move at most N messages (0: until the parking queue is empty)")
	fs.DurationVar(&o.Timeout, "confirm-timeout", 5*time.Second, "how long to wait for each publisher confirm")
	if err := fs.Parse(args); err != nil {
		return o, worker.FlagError("lab worker redrive", fs, err)
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("lab worker redrive: unexpected argument %q", fs.Arg(0))
	case o.From == "" || o.To == "":
		return o, fmt.Errorf("lab worker redrive: --from PARKED and --to QUEUE are required")
	case o.From == o.To:
		return o, fmt.Errorf("lab worker redrive: --from and --to are both %s: a redrive moves messages to another queue", o.From)
	case o.Count < 0:
		return o, fmt.Errorf("lab worker redrive: --count must be 0 (all) or more")
	}
	return o, nil
}

// Main is `lab worker redrive`.
func Main(ctx context.Context, p *worker.Parent, args []string) error {
	o, err := ParseArgs(args)
	if err != nil {
		return err
	}
	w, err := services.OpenWorker(ctx, "", services.ConfirmChannel)
	if err != nil {
		return err
	}
	defer w.Close()
	ch := w.Ch
	from, to := w.Names.Name(o.From), w.Names.Name(o.To)
	for _, q := range []string{from, to} {
		if err := services.QueueExists(ch, q, w.Config.AMQP, "redrive"); err != nil {
			return err
		}
	}
	moved := 0
	for o.Count == 0 || moved < o.Count {
		d, ok, err := ch.Get(from, false)
		if err != nil {
			return fmt.Errorf("basic.get from %s: %w", from, err)
		}
		if !ok {
			break
		}
		p.Logf("got message-id=%s from %s (tag=%d)", d.MessageId, from, d.DeliveryTag)
		if err := p.Reach(ctx, "after-get"); err != nil {
			return err
		}
		if err := move(ctx, p, ch, d, to, o.Timeout); err != nil {
			return err
		}
		moved++
	}
	if o.Count > 0 && moved == o.Count {
		p.Logf("moved %d from %s to %s (--count %d)", moved, from, to, o.Count)
		return nil
	}
	p.Logf("moved %d from %s to %s; %s is empty", moved, from, to, from)
	return nil
}

// move publishes d's copy to queue, waits for its confirm, then acks d.
func move(ctx context.Context, p *worker.Parent, ch *amqp.Channel, d amqp.Delivery, queue string, timeout time.Duration) error {
	h := amqp.Table{}
	for k, v := range d.Headers {
		if k == "x-death" || strings.HasPrefix(k, "x-first-death-") || strings.HasPrefix(k, "x-last-death-") {
			continue
		}
		h[k] = v
	}
	n, _ := h["x-redriven"].(int64)
	h["x-redriven"] = n + 1
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dc, err := ch.PublishWithDeferredConfirmWithContext(pctx, "", queue, true, false, amqp.Publishing{
		MessageId: d.MessageId, Body: d.Body, Headers: h, ContentType: d.ContentType, DeliveryMode: amqp.Persistent,
	})
	if err != nil {
		return fmt.Errorf("publish message-id=%s to %s: %w", d.MessageId, queue, err)
	}
	p.Logf("published message-id=%s to %s (x-death left behind)", d.MessageId, queue)
	if err := p.Reach(ctx, "after-publish"); err != nil {
		return err
	}
	ok, err := dc.WaitContext(pctx)
	if err != nil || !ok {
		return fmt.Errorf("no confirm for message-id=%s to %s (%v): the parked copy stays unacked and is moved again by the next redrive", d.MessageId, queue, err)
	}
	p.Logf("confirmed")
	if err := p.Reach(ctx, "after-confirm"); err != nil {
		return err
	}
	if err := d.Ack(false); err != nil {
		return fmt.Errorf("basic.ack the parked copy tag=%d: %w", d.DeliveryTag, err)
	}
	// A synchronous round trip: once it answers, the ack was processed, so
	// a kill after "after-ack" cannot race it.
	if _, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil); err != nil {
		return fmt.Errorf("after acking tag=%d: %w", d.DeliveryTag, err)
	}
	p.Logf("acked the parked copy (tag=%d)", d.DeliveryTag)
	return p.Reach(ctx, "after-ack")
}

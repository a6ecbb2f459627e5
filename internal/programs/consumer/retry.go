package consumer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/broker"
)

// FailureModes are how the consumer settles a delivery it failed to handle
// (an ordinary failure: --fail, or an error of its own): nack with requeue
// (the broker delivers it again at once: on a classic queue at the head), or
// reject without requeue (the queue's dead-letter exchange takes it: to a
// retry queue whose TTL dead-letters it back, a delayed retry).
var FailureModes = []string{"requeue", "reject"}

// errDownstream is the failure --fail plays: a call the handler makes
// (a payment service, another database) answers with an error.
var errDownstream = errors.New("the downstream call failed (--fail: the service it calls is down)")

// Attempts is how many times the broker says this message was handled
// before and failed: quorum queues count returns in x-delivery-count; a
// retry loop through a dead-letter exchange counts in x-death, one entry
// per queue and reason ("rejected" from this queue). The larger is taken.
func Attempts(d amqp.Delivery, queue string) int64 {
	n, _ := broker.Int(d.Headers["x-delivery-count"])
	var rejected int64
	for _, e := range broker.Deaths(d.Headers) {
		if e.Queue == queue && e.Reason == "rejected" {
			rejected += e.Count
		}
	}
	return max(n, rejected)
}

// failed settles a delivery whose handling failed before anything was
// applied: parked once it has used its retries, else requeued or rejected
// as --on-failure says.
func (c *Consumer) failed(ctx context.Context, a *acker, d amqp.Delivery, o Options, cause error) error {
	attempts := Attempts(d, a.queue)
	of := ""
	if o.MaxRetries > 0 {
		of = fmt.Sprintf(" of %d", o.MaxRetries+1)
	}
	c.logf("failed: %v (attempt %d%s, tag=%d)", cause, attempts+1, of, d.DeliveryTag)
	if err := c.reach(ctx, "failed"); err != nil {
		return err
	}
	if o.MaxRetries > 0 && attempts >= int64(o.MaxRetries) {
		return c.park(ctx, a, d, attempts+1)
	}
	switch o.OnFailure {
	case "reject":
		if err := a.reject(d.DeliveryTag); err != nil {
			return fmt.Errorf("basic.reject tag %d: %w", d.DeliveryTag, err)
		}
		// The consumer cannot see the queue's arguments or policies over
		// AMQP: say both outcomes, not the one a lesson may not have set up.
		c.logf("rejected tag=%d without requeue: the broker dead-letters it if the queue has a dead-letter exchange (x-dead-letter-exchange or a policy; a retry queue then holds it for its TTL), else drops it", d.DeliveryTag)
		return nil
	default:
		time.Sleep(500 * time.Millisecond) // no hot loop on a persistent failure
		if err := a.nack(d.DeliveryTag, true); err != nil {
			return fmt.Errorf("basic.nack tag %d: %w", d.DeliveryTag, err)
		}
		c.logf("nacked tag=%d with requeue: the broker delivers it again", d.DeliveryTag)
		return nil
	}
}

// park moves a message that used its retries to the parking queue: publish
// a copy (same id, body and headers, x-death included, so a person sees its
// history) with a confirm, and only then ack the original. A crash between
// the two leaves both: the parking queue's copy and a redelivery, which is
// why whatever later moves parked messages back meets the consumer's key.
func (c *Consumer) park(ctx context.Context, a *acker, d amqp.Delivery, attempts int64) error {
	h := amqp.Table{}
	for k, v := range d.Headers {
		h[k] = v
	}
	h["x-parked-after-attempts"] = attempts
	err := a.park.publish(ctx, amqp.Publishing{
		MessageId: d.MessageId, Body: d.Body, Headers: h, ContentType: d.ContentType, DeliveryMode: amqp.Persistent,
	})
	if err != nil {
		return fmt.Errorf("park tag %d: %w; the original stays unacked and comes back", d.DeliveryTag, err)
	}
	c.logf("parked in %s after %d attempts (confirmed)", a.park.queue, attempts)
	if err := c.reach(ctx, "after-park"); err != nil {
		return err
	}
	return c.ackNow(ctx, a, d)
}

// failing reports whether --fail names this event.
func failing(o Options, eventID string) bool { return slices.Contains(o.Fail, eventID) }

// history is what the broker says of a delivery's past, for the log: its
// routing key, and every x-death entry (a retry through a dead-letter loop
// shows as "orders.wait expired 2, orders rejected 2").
func (c *Consumer) history(d amqp.Delivery) string {
	s := fmt.Sprintf(" key=%s", c.article(d.RoutingKey))
	if ds := broker.Deaths(d.Headers); len(ds) > 0 {
		s += " x-death=[" + broker.DeathsText(ds, c.article) + "]"
	}
	return s
}

// article is a name without this namespace's suffix, as lessons write it.
func (c *Consumer) article(n string) string {
	if c.NS != "" {
		return strings.TrimSuffix(n, "_"+c.NS)
	}
	return n
}

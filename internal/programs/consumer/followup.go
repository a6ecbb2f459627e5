package consumer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/services"
)

// FollowUpModes are when a consumer with --follow-up publishes its
// follow-up: for every message it handled (applied, or absorbed as a
// duplicate: the safe choice, since a crash between the commit and the
// publish leaves only the redelivery to send it), or only for one it
// applied (a redelivery that meets the mark sends nothing: the follow-up of
// a crash there is lost).
var FollowUpModes = []string{"handled", "applied"}

// confirmChannel publishes to one queue on a channel of its own in confirm
// mode, mandatory, one message at a time: a copy parked after its retries,
// or a follow-up. A publish returns once the broker confirmed it and no
// return came, so whatever is settled after it cannot outrun it.
type confirmChannel struct {
	mu      sync.Mutex
	ch      *amqp.Channel
	queue   string // namespaced
	what    string // "parking", "follow-up": in errors
	returns <-chan amqp.Return
}

func openConfirmChannel(conn *amqp.Connection, cfg services.Config, queue, what string) (*confirmChannel, error) {
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("open the %s channel: %w", what, err)
	}
	if err := services.QueueExists(ch, queue, cfg.AMQP, "consumer"); err != nil {
		return nil, fmt.Errorf("the %s queue: %w", what, err)
	}
	if err := ch.Confirm(false); err != nil {
		return nil, fmt.Errorf("confirm.select on the %s channel: %w", what, err)
	}
	return &confirmChannel{ch: ch, queue: queue, what: what, returns: ch.NotifyReturn(make(chan amqp.Return, 1))}, nil
}

func (p *confirmChannel) Close() error { return p.ch.Close() }

// publish sends m and waits for its confirm (5 s at most).
func (p *confirmChannel) publish(ctx context.Context, m amqp.Publishing) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(pctx, "", p.queue, true, false, m)
	if err != nil {
		return fmt.Errorf("publish to %s: %w", p.queue, err)
	}
	ok, err := dc.WaitContext(pctx)
	if err != nil || !ok {
		return fmt.Errorf("publish to %s: no confirm (%v)", p.queue, err)
	}
	// mandatory: a return comes before the ack, so it is here by now.
	select {
	case r := <-p.returns:
		return fmt.Errorf("the broker returned the message (%d %s): no queue %s took it", r.ReplyCode, r.ReplyText, p.queue)
	default:
	}
	return nil
}

// followsUp reports whether a handling with this outcome sends the
// follow-up.
func followsUp(o Options, out Outcome) bool {
	if o.FollowUp == "" {
		return false
	}
	return out == Applied || (out == Absorbed && o.FollowUpOn == "handled")
}

// followUp publishes the next stage's message for a handled delivery: its
// body, under a message id of its own that is the same for every copy of
// the delivery (EVENT_ID/CONSUMER), so the next stage's consumer can tell a
// repeat. It runs after the commit and before the ack: a crash between the
// two leaves the delivery unacked, and its redelivery sends the follow-up
// again (with --follow-up-on handled).
func (c *Consumer) followUp(ctx context.Context, p *confirmChannel, d amqp.Delivery, m Message) error {
	if err := c.reach(ctx, "before-follow-up"); err != nil {
		return err
	}
	id := m.EventID + "/" + c.Name
	err := p.publish(ctx, amqp.Publishing{
		MessageId: id, Body: d.Body, ContentType: d.ContentType, DeliveryMode: amqp.Persistent,
		Headers: amqp.Table{"x-follow-up-of": m.EventID},
	})
	if err != nil {
		return fmt.Errorf("the follow-up of %s: %w; the delivery stays unacked and comes back", m.EventID, err)
	}
	c.logf("follow-up %s published to %s (confirmed)", id, c.article(p.queue))
	return c.reach(ctx, "after-follow-up")
}

func validFollowUpOn(s string) bool { return slices.Contains(FollowUpModes, s) }

package relay

// Publishing one event and reading what the broker said about it: the
// confirm, a basic.return, or the channel closing under it.

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// publish sends one event, mandatory unless NoMandatory, persistent, with
// its message id, and returns the confirmation to wait for.
func (r *Relay) publish(ctx context.Context, ev Event) (*amqp.DeferredConfirmation, error) {
	c, cancel := context.WithTimeout(ctx, r.cfg.ConfirmTimeout)
	defer cancel()
	dc, err := r.ch.PublishWithDeferredConfirmWithContext(c, r.cfg.Exchange, r.cfg.RoutingKey, !r.cfg.NoMandatory, false, amqp.Publishing{
		MessageId:    r.messageID(ev),
		Type:         ev.Type,
		ContentType:  "application/json",
		DeliveryMode: amqp.Persistent,
		Timestamp:    time.Now(),
		Body:         ev.Payload,
	})
	if err != nil {
		return nil, fmt.Errorf("publish %s to exchange %q key %q: %w (is the broker up?)", ev.ID, r.cfg.Exchange, r.cfg.RoutingKey, err)
	}
	r.published.Add(1)
	r.note("published", ev.ID)
	if r.logs {
		mand := "mandatory"
		if r.cfg.NoMandatory {
			mand = "NOT mandatory"
		}
		r.hooks.Logf("%s: published %s (message id %s, %s, persistent) to exchange %q key %q", r.cfg.Name, ev.ID, r.messageID(ev), mand, r.cfg.Exchange, r.cfg.RoutingKey)
	}
	return dc, nil
}

func (r *Relay) note(kind, id string) {
	if r.notes != nil {
		r.notes.Note(kind, id)
	}
}

// result is what the broker said about one publish.
type result struct {
	ok     bool
	reason string // why not, for last_error and the log
}

func (r *Relay) await(ctx context.Context, ev Event, dc *amqp.DeferredConfirmation) result {
	c, cancel := context.WithTimeout(ctx, r.cfg.ConfirmTimeout)
	defer cancel()
	acked, err := dc.WaitContext(c)
	r.drainReturns()
	var res result
	switch {
	case err != nil:
		res.reason = fmt.Sprintf("no confirm within %s (it may still have been stored)", r.cfg.ConfirmTimeout)
	case !acked:
		select {
		case e, ok := <-r.closed:
			if ok {
				r.closeErr = e
			}
			r.isClosed = true
			res.reason = fmt.Sprintf("channel closed before the confirm (%v): outcome unknown", r.closeErr)
		default:
			res.reason = "nacked by the broker"
		}
	default:
		if ret, ok := r.returned[r.messageID(ev)]; ok {
			delete(r.returned, r.messageID(ev))
			res.reason = fmt.Sprintf("returned unroutable: %d %s (confirmed, but no queue took it)", ret.ReplyCode, ret.ReplyText)
		} else {
			res.ok = true
		}
	}
	if res.ok {
		if r.logs {
			r.hooks.Logf("%s: confirm: basic.ack for %s, no return", r.cfg.Name, ev.ID)
		}
	} else {
		r.hooks.Logf("%s: %s: %s", r.cfg.Name, ev.ID, res.reason)
	}
	return res
}

// messageID is the event id, the same on every attempt; FreshMessageID
// (unsafe) makes each attempt look like a new message.
func (r *Relay) messageID(ev Event) string {
	if r.cfg.FreshMessageID {
		return fmt.Sprintf("%s-attempt-%d", ev.ID, ev.Attempts)
	}
	return ev.ID
}

func (r *Relay) drainReturns() {
	for {
		select {
		case ret, ok := <-r.rets:
			if !ok {
				// The library closes it with the channel: reading on would
				// spin here forever instead of reporting the lost connection.
				return
			}
			r.returned[ret.MessageId] = ret
		default:
			return
		}
	}
}

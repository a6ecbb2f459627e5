package consumer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/services"
)

// Consume handles deliveries from queue (already namespaced) one at a time
// until ctx ends or o.Count deliveries were handled. The queue is the
// lesson's: it must exist.
func (c *Consumer) Consume(ctx context.Context, cfg services.Config, queue string, o Options) error {
	conn, err := services.OpenAMQP(ctx, cfg.AMQP)
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open an AMQP channel: %w", err)
	}
	if err := services.QueueExists(ch, queue, cfg.AMQP, "consumer"); err != nil {
		return err
	}
	if err := ch.Qos(o.Prefetch, 0, false); err != nil {
		return fmt.Errorf("basic.qos prefetch %d: %w", o.Prefetch, err)
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	tag := "lab-" + c.Name
	deliveries, err := ch.ConsumeWithContext(ctx, queue, tag, false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("basic.consume on %s: %w", queue, err)
	}
	c.logf("%s (%s) consuming %s, ack %s, prefetch %d%s", c.Name, c.Strategy, queue, o.Ack, o.Prefetch, handlers(o.Concurrency))
	a := &acker{ch: ch, queue: queue, cancel: sync.OnceFunc(func() { _ = ch.Cancel(tag, false) })}
	if o.ParkQueue != "" {
		if a.park, err = openConfirmChannel(conn, cfg, names(cfg).Name(o.ParkQueue), "parking"); err != nil {
			return err
		}
		defer a.park.Close()
	}
	if o.FollowUp != "" {
		if a.follow, err = openConfirmChannel(conn, cfg, names(cfg).Name(o.FollowUp), "follow-up"); err != nil {
			return err
		}
		defer a.follow.Close()
	}
	// Handlers take deliveries from work, one at a time each: one handler
	// is the ordinary consumer; --concurrency N runs N side by side, as a
	// consumer with a thread pool does, finishing in whatever order.
	n := max(o.Concurrency, 1)
	work := make(chan amqp.Delivery)
	results := make(chan error, n)
	for range n {
		go func() {
			for d := range work {
				results <- c.handleOne(ctx, a, d, o)
			}
		}()
	}
	defer close(work)
	handled, busy, taken := 0, 0, 0
	stream := deliveries
	for {
		if busy == n || (o.Count > 0 && taken >= o.Count) {
			// Every handler is busy: take no delivery until one is free. Or
			// the count is taken: the consumer is cancelled before its last
			// settle, which ends the stream; wait for the handlers.
			stream = nil
		} else {
			stream = deliveries
		}
		select {
		case <-ctx.Done():
			c.logf("stopping: %s handled", countDeliveries(handled))
			return nil
		case e := <-closed:
			if e == nil {
				return fmt.Errorf("the channel to %s closed", queue)
			}
			return fmt.Errorf("the broker closed the channel: %v", e)
		case err := <-results:
			busy--
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			handled++
			if o.Count > 0 && handled >= o.Count {
				c.logf("handled %s, stopping", countDeliveries(handled))
				// Nothing new is pushed after the last settle (see acker);
				// anything prefetched and unacked goes back to the queue
				// when the channel closes.
				a.cancel()
				return nil
			}
		case d, ok := <-stream:
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("the delivery stream of %s ended (channel or connection closed)", queue)
			}
			busy++
			if taken++; o.Count > 0 && taken == o.Count {
				a.setLast(d.DeliveryTag)
			}
			work <- d
		}
	}
}

// handleOne handles and settles one delivery: a poison message as
// --on-poison says, any other through the strategy.
func (c *Consumer) handleOne(ctx context.Context, a *acker, d amqp.Delivery, o Options) error {
	if o.Poison != "" && poisoned(d, o.Poison) {
		return c.poison(ctx, a, d, o.OnPoison)
	}
	return c.delivery(ctx, a, d, o)
}

func handlers(n int) string {
	if n > 1 {
		return fmt.Sprintf(", %d handlers side by side", n)
	}
	return ""
}

// acker serialises acks on one channel: concurrent acks have caused channel
// errors, and a delivery tag belongs to this channel only.
type acker struct {
	mu    sync.Mutex
	ch    *amqp.Channel
	queue string
	// The delivery that makes --count and the consumer's cancel: settling
	// that delivery frees its prefetch slot, so the broker would push the
	// next message to a consumer about to stop (which then goes back to the
	// queue behind later ones, marked redelivered). The cancel goes first.
	last   uint64
	cancel func()
	// When --park-queue is set: where a copy that used its retries goes;
	// when --follow-up is: where the next stage's message goes.
	park, follow *confirmChannel
}

func names(cfg services.Config) services.Names { return services.Names{NS: cfg.Namespace} }

// ack sends basic.ack and then makes one synchronous round trip on the same
// channel: the broker handles a channel's methods in order, so when the
// reply arrives the ack has been processed. Only then is "after-ack" true —
// a kill right after it cannot win a race with an ack still in flight.
func (a *acker) ack(tag uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastGoes(tag)
	if err := a.ch.Ack(tag, false); err != nil {
		return err
	}
	_, err := a.ch.QueueDeclarePassive(a.queue, false, false, false, false, nil)
	return err
}

func (a *acker) reject(tag uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastGoes(tag)
	return a.ch.Reject(tag, false)
}

func (a *acker) nack(tag uint64, requeue bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.lastGoes(tag)
	return a.ch.Nack(tag, false, requeue)
}

func (a *acker) setLast(tag uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = tag
}

// lastGoes cancels the consumer before the last delivery is settled (with
// a.mu held).
func (a *acker) lastGoes(tag uint64) {
	if a.last != 0 && tag == a.last && a.cancel != nil {
		a.cancel()
	}
}

func (c *Consumer) ackNow(ctx context.Context, a *acker, d amqp.Delivery) error {
	if err := c.reach(ctx, "before-ack"); err != nil {
		return err
	}
	if err := a.ack(d.DeliveryTag); err != nil {
		return fmt.Errorf("basic.ack tag %d: %w", d.DeliveryTag, err)
	}
	c.logf("acked tag=%d", d.DeliveryTag)
	return c.reach(ctx, "after-ack")
}

// poisoned reports whether d is the poison message: its message id, or its
// body's event_id.
func poisoned(d amqp.Delivery, id string) bool {
	if d.MessageId == id {
		return true
	}
	var m struct {
		EventID string `json:"event_id"`
	}
	return json.Unmarshal(d.Body, &m) == nil && m.EventID == id
}

// poison fails on d as a consumer does on a message it can never process
// (a bug, a payload no version of the code reads), and settles it as mode
// says. Nothing is applied.
func (c *Consumer) poison(ctx context.Context, a *acker, d amqp.Delivery, mode string) error {
	c.logf("delivery tag=%d redelivered=%t message-id=%s%s: cannot be processed (a poison message)",
		d.DeliveryTag, d.Redelivered, d.MessageId, deliveryCount(d))
	if err := c.reach(ctx, "poisoned"); err != nil {
		return err
	}
	var err error
	switch mode {
	case "nack-requeue":
		err = a.nack(d.DeliveryTag, true)
		c.logf("nacked tag=%d with requeue: the broker will deliver it again", d.DeliveryTag)
		time.Sleep(200 * time.Millisecond) // a real consumer's retry pause; it still loops
	case "nack":
		err = a.nack(d.DeliveryTag, false)
		c.logf("nacked tag=%d without requeue: the broker dead-letters it (or drops it, with no dead-letter exchange)", d.DeliveryTag)
	case "reject":
		err = a.reject(d.DeliveryTag)
		c.logf("rejected tag=%d without requeue: the broker dead-letters it (or drops it, with no dead-letter exchange)", d.DeliveryTag)
	}
	if err != nil {
		return fmt.Errorf("settle the poison message tag %d (%s): %w", d.DeliveryTag, mode, err)
	}
	return nil
}

// deliveryCount is ", x-delivery-count=N" when the broker counts (quorum).
func deliveryCount(d amqp.Delivery) string {
	if v, ok := d.Headers["x-delivery-count"]; ok {
		return fmt.Sprintf(" x-delivery-count=%v", v)
	}
	return ""
}

// bodyShape is the JSON an effect reads, for error messages.
var bodyShape = map[Effect]string{
	EffectPoints:    `{"event_id","business_key","user_id","amount"}`,
	EffectSMSTask:   `{"event_id","business_key","user_id","amount"}`,
	EffectOrderView: `{"orderId","version","status"} (the outbox payload; the event id in the message-id property)`,
}

// decode reads the JSON body for effect e; the message-id property stands
// in for a missing event_id (the outbox relay sends the payload as the body
// and the event id as the message id).
func decode(d amqp.Delivery, e Effect) (Message, error) {
	var m Message
	if err := json.Unmarshal(d.Body, &m); err != nil {
		return m, fmt.Errorf("body is not the JSON %s: %v", bodyShape[e], err)
	}
	if m.EventID == "" {
		m.EventID = d.MessageId
	}
	if m.EventID == "" {
		return m, fmt.Errorf("no event_id in the body and no message-id property")
	}
	if miss := m.lacks(e); len(miss) > 0 {
		return m, fmt.Errorf("no %s in the body %s; %s expects %s", strings.Join(miss, ", "), d.Body, e, bodyShape[e])
	}
	return m, nil
}

// delivery handles one delivery and settles it: ack when done (after or
// before the commit, as asked), reject a conflict without requeue, and a
// failure as --on-failure and --max-retries say.
func (c *Consumer) delivery(ctx context.Context, a *acker, d amqp.Delivery, o Options) error {
	m, err := decode(d, c.Effect)
	if err != nil {
		c.logf("delivery tag=%d redelivered=%t: %v; rejected without requeue", d.DeliveryTag, d.Redelivered, err)
		return a.nack(d.DeliveryTag, false)
	}
	c.logf("delivery tag=%d redelivered=%t %s%s", d.DeliveryTag, d.Redelivered, m, c.history(d))
	if failing(o, m.EventID) {
		return c.failed(ctx, a, d, o, errDownstream)
	}
	if slow, ok := o.Slow[m.EventID]; ok {
		c.logf("%s is slow: %s before it is handled (--slow)", m.EventID, slow)
		select {
		case <-time.After(slow):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	acked := false
	var before early
	if o.Ack == "before-commit" {
		before = func(ctx context.Context) error {
			acked = true
			return c.ackNow(ctx, a, d)
		}
	}
	res, err := c.Handle(ctx, m, before)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		if acked {
			c.logf("failed after the ack: %v; the broker will not redeliver tag=%d", err, d.DeliveryTag)
			return nil
		}
		return c.failed(ctx, a, d, o, err)
	}
	c.logf("%s", res.Detail)
	if c.P != nil {
		c.P.Note(noteOf[res.Outcome], m.BusinessKey)
	}
	if followsUp(o, res.Outcome) {
		if err := c.followUp(ctx, a.follow, d, m); err != nil {
			return err
		}
	}
	switch {
	case acked:
		return nil
	case res.Outcome == Conflict:
		c.logf("rejected tag=%d without requeue: the payload is kept in consumed_conflict for a person to settle", d.DeliveryTag)
		return a.nack(d.DeliveryTag, false)
	default:
		return c.ackNow(ctx, a, d)
	}
}

// noteOf is the note each outcome leaves for a caller that counts (lab
// chaos), keyed by the message's business key.
var noteOf = map[Outcome]string{Applied: "applied", Absorbed: "duplicate", Conflict: "conflict", Stale: "stale"}

func countDeliveries(n int) string {
	if n == 1 {
		return "1 delivery"
	}
	return fmt.Sprintf("%d deliveries", n)
}

package broker

import (
	"context"
	"fmt"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
	lab "github.com/rmlab/lab"
)

// Queue types RabbitMQ offers (x-queue-type).
const (
	Classic = "classic"
	Quorum  = "quorum"
	Stream  = "stream"
)

// Queue is a queue to declare. Name is the real (namespaced) name.
type Queue struct {
	Name    string
	Type    string // classic (default), quorum or stream
	Durable bool
}

// Args are the declare arguments the type needs.
func (q Queue) Args() amqp.Table {
	if q.Type == "" || q.Type == Classic {
		return nil
	}
	return amqp.Table{"x-queue-type": q.Type}
}

// String is the declare as the learner reads it.
func (q Queue) String() string {
	typ := q.Type
	if typ == "" {
		typ = Classic
	}
	return fmt.Sprintf("queue.declare %s type=%s durable=%t", q.Name, typ, q.Durable)
}

// Exchange is an exchange to declare.
type Exchange struct {
	Name    string
	Type    string // direct (default), fanout, topic, headers
	Durable bool
}

func (x Exchange) String() string {
	return fmt.Sprintf("exchange.declare %s type=%s durable=%t", x.Name, x.kind(), x.Durable)
}

func (x Exchange) kind() string {
	if x.Type == "" {
		return amqp.ExchangeDirect
	}
	return x.Type
}

// Binding routes messages published to Exchange with Key into Queue.
type Binding struct{ Queue, Exchange, Key string }

func (b Binding) String() string {
	return fmt.Sprintf("queue.bind %s ← %s key=%q", b.Queue, b.Exchange, b.Key)
}

// The lab marks every exchange and queue it declares with a companion
// exchange, the way it marks its databases with a table: reset deletes a
// queue or exchange only when its mark exists, so a queue that merely shares
// a lab name (someone else's "orders") is never touched. The mark lives in
// the broker, so it survives restarts and is seen by every lab process.
const markPrefix = "lab.created-by-reliable-messaging-lab."

// MarkOf is the name of the mark exchange for a queue or an exchange.
func MarkOf(kind, name string) string { return markPrefix + kind + "." + name }

// DeclareQueue declares q and marks it as the lab's. The mark is declared
// first: a queue the lab created always carries one.
func DeclareQueue(ch *amqp.Channel, q Queue) error {
	if err := mark(ch, "queue", q.Name); err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(q.Name, q.Durable, false, false, false, q.Args()); err != nil {
		return err
	}
	t := q.Type
	if t == "" {
		t = Classic
	}
	noteType(q.Name, t)
	return nil
}

// DeclareExchange declares x and marks it as the lab's.
func DeclareExchange(ch *amqp.Channel, x Exchange) error {
	if err := mark(ch, "exchange", x.Name); err != nil {
		return err
	}
	return ch.ExchangeDeclare(x.Name, x.kind(), x.Durable, false, false, false, nil)
}

// Bind binds b.
func Bind(ch *amqp.Channel, b Binding) error {
	return ch.QueueBind(b.Queue, b.Key, b.Exchange, false, nil)
}

func mark(ch *amqp.Channel, kind, name string) error {
	// Durable and internal: it outlives restarts and nobody can publish to it.
	if err := ch.ExchangeDeclare(MarkOf(kind, name), amqp.ExchangeFanout, true, false, true, false, nil); err != nil {
		return fmt.Errorf("mark %s %s as the lab's: %w", kind, name, err)
	}
	return nil
}

// Remove deletes a queue or exchange (kind "queue" or "exchange", real name)
// only if the lab's mark says the lab created it. It returns what it did, for
// the transcript. An unmarked object that exists is refused with a lab.Error
// and left alone.
func (c *Client) Remove(ctx context.Context, kind, name string) (string, error) {
	exists, err := c.exists(ctx, kind, name)
	if err != nil {
		return "", err
	}
	marked, err := c.exists(ctx, "exchange", MarkOf(kind, name))
	if err != nil {
		return "", err
	}
	if exists && !marked {
		fix := "run it with another namespace (--namespace NAME gives " + name + "_NAME)"
		return "", &lab.Error{
			What:  fmt.Sprintf("%s %s exists but the lab did not create it (no mark exchange %s); nothing was deleted", kind, name, MarkOf(kind, name)),
			Where: "RabbitMQ",
			Fix:   fix + ", or delete it yourself (rabbitmqctl delete_queue " + name + ") if it is disposable",
		}
	}
	if !exists && !marked {
		return "", nil
	}
	var note string
	err = c.Probe(ctx, func(ch *amqp.Channel) error {
		if exists {
			switch kind {
			case "queue":
				n, err := ch.QueueDelete(name, false, false, false)
				if err != nil {
					return err
				}
				note = fmt.Sprintf("queue.delete %s (%d message%s dropped)", name, n, plural(n))
				types.Delete(name)
				held.Lock()
				delete(held.m, name)
				held.Unlock()
			default:
				if err := ch.ExchangeDelete(name, false, false); err != nil {
					return err
				}
				note = "exchange.delete " + name
			}
		} else {
			note = fmt.Sprintf("%s %s was already gone", kind, name)
		}
		return ch.ExchangeDelete(MarkOf(kind, name), false, false)
	})
	if err != nil {
		return "", fmt.Errorf("delete %s %s: %w", kind, name, err)
	}
	return note, nil
}

func (c *Client) exists(ctx context.Context, kind, name string) (bool, error) {
	err := c.Probe(ctx, func(ch *amqp.Channel) error {
		if kind == "queue" {
			_, err := ch.QueueDeclarePassive(name, false, false, false, false, nil)
			return err
		}
		return ch.ExchangeDeclarePassive(name, "", false, false, false, false, nil)
	})
	if IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("look up %s %s: %w", kind, name, err)
	}
	return true, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ValidType reports whether t is a queue type the lab declares.
func ValidType(t string) bool {
	switch strings.ToLower(t) {
	case Classic, Quorum, Stream:
		return true
	}
	return false
}

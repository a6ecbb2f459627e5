package broker

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

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
	// Extra are further x-arguments (dead-lettering, limits, TTLs), typed
	// as the broker wants them (QueueArgs).
	Extra amqp.Table
}

// Args are the declare arguments: the type's and Extra.
func (q Queue) Args() amqp.Table {
	if (q.Type == "" || q.Type == Classic) && len(q.Extra) == 0 {
		return nil
	}
	t := amqp.Table{}
	for k, v := range q.Extra {
		t[k] = v
	}
	if q.Type != "" && q.Type != Classic {
		t["x-queue-type"] = q.Type
	}
	return t
}

// An Arg is one declare argument a lesson may write, with its type.
type Arg struct {
	Name string
	Kind string // "exchange" (a name, namespaced), "string", "int", "duration" (sent in ms), or a list of words
	Help string
}

// QueueArgs are the queue arguments a declare line may set.
var QueueArgs = []Arg{
	{"x-dead-letter-exchange", "exchange", "where rejected, expired or over-limit messages go"},
	{"x-dead-letter-routing-key", "string", "the routing key they go with (default: their own)"},
	{"x-delivery-limit", "int", "quorum: dead-letter (or drop) after this many deliveries"},
	{"x-message-ttl", "duration", "a message expires after this long in the queue (e.g. 5s, 500ms)"},
	{"x-expires", "duration", "the queue is deleted after this long unused"},
	{"x-max-length", "int", "at most this many messages ready"},
	{"x-overflow", "drop-head|reject-publish|reject-publish-dlx", "what happens past x-max-length"},
	{"x-dead-letter-strategy", "at-most-once|at-least-once", "quorum: how dead-lettering is confirmed"},
	{"x-single-active-consumer", "bool", "one consumer at a time gets deliveries"},
}

// ExchangeArgs are the exchange arguments a declare line may set.
var ExchangeArgs = []Arg{
	{"alternate-exchange", "exchange", "where messages no queue takes go"},
}

// ArgValue turns a lesson's text into the typed value the broker expects;
// names maps an exchange name to the one sent (namespaced).
func ArgValue(a Arg, v string, names func(string) string) (any, error) {
	switch a.Kind {
	case "exchange":
		return names(v), nil
	case "string":
		return v, nil
	case "int":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s=%s: want a whole number ≥ 0", a.Name, v)
		}
		return n, nil
	case "bool":
		if v != "true" && v != "false" {
			return nil, fmt.Errorf("%s=%s: want true or false", a.Name, v)
		}
		return v == "true", nil
	case "duration":
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s=%s: want a duration such as 5s or 500ms", a.Name, v)
		}
		return d.Milliseconds(), nil
	}
	for _, w := range strings.Split(a.Kind, "|") {
		if v == w {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%s=%s: want one of %s", a.Name, v, strings.ReplaceAll(a.Kind, "|", ", "))
}

// FindArg looks an argument up by name.
func FindArg(args []Arg, name string) (Arg, bool) {
	for _, a := range args {
		if a.Name == name {
			return a, true
		}
	}
	return Arg{}, false
}

// argsText shows x-arguments in a stable order, as the learner reads them.
func argsText(t amqp.Table) string {
	var keys []string
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%v", k, t[k])
	}
	return b.String()
}

// String is the declare as the learner reads it.
func (q Queue) String() string {
	typ := q.Type
	if typ == "" {
		typ = Classic
	}
	return fmt.Sprintf("queue.declare %s type=%s durable=%t", q.Name, typ, q.Durable) + argsText(q.Extra)
}

// Exchange is an exchange to declare.
type Exchange struct {
	Name    string
	Type    string // direct (default), fanout, topic, headers
	Durable bool
	Args    amqp.Table // alternate-exchange
}

func (x Exchange) String() string {
	return fmt.Sprintf("exchange.declare %s type=%s durable=%t", x.Name, x.kind(), x.Durable) + argsText(x.Args)
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

// MarkedNames reads the lab's marks among exchange names: the real names
// of the queues and exchanges the lab created.
func MarkedNames(exchangeNames []string) (queues, exchanges []string) {
	for _, n := range exchangeNames {
		if rest, ok := strings.CutPrefix(n, markPrefix+"queue."); ok {
			queues = append(queues, rest)
		} else if rest, ok := strings.CutPrefix(n, markPrefix+"exchange."); ok {
			exchanges = append(exchanges, rest)
		}
	}
	return queues, exchanges
}

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
	return ch.ExchangeDeclare(x.Name, x.kind(), x.Durable, false, false, false, x.Args)
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

// Refuses says why a queue of type typ does not honour the argument k=v
// ("" when it does): the broker refuses some at declare, and ignores
// others, which is worse (a classic queue with x-delivery-limit loops a
// poison message forever).
func Refuses(typ, k, v string) string {
	switch {
	case typ == Stream && strings.HasPrefix(k, "x-") && k != "x-max-length-bytes" && k != "x-max-age" && k != "x-stream-max-segment-size-bytes":
		return "streams keep every message for every consumer: they have no dead-lettering, TTL per message, length cap in messages, overflow, delivery limit or single active consumer (RabbitMQ refuses the declare); use type=quorum or classic"
	case k == "x-delivery-limit" && typ != Quorum:
		return "only quorum queues count deliveries; a classic queue ignores x-delivery-limit and redelivers a poison message forever; declare type=quorum"
	case k == "x-dead-letter-strategy" && typ != Quorum:
		return "only quorum queues have a dead-letter strategy (classic queues dead-letter at most once, and ignore it); declare type=quorum or drop the argument"
	case k == "x-overflow" && v == "reject-publish-dlx" && typ == Quorum:
		return "quorum queues refuse reject-publish-dlx (RabbitMQ answers 406 at the declare); use reject-publish, or a classic queue"
	}
	return ""
}

package broker

import (
	"fmt"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Death is one entry of a message's x-death header: the queue it was
// dead-lettered from, why (rejected, expired, maxlen, delivery_limit), and
// how many times for that queue and reason. The broker keeps one entry per
// queue and reason, newest first.
type Death struct {
	Queue, Reason, Exchange string
	Count                   int64
}

// Deaths reads a message's x-death history, newest first.
func Deaths(h amqp.Table) []Death {
	list, _ := h["x-death"].([]any)
	var out []Death
	for _, e := range list {
		t, ok := e.(amqp.Table)
		if !ok {
			continue
		}
		d := Death{Queue: fmt.Sprint(t["queue"]), Reason: fmt.Sprint(t["reason"]), Exchange: fmt.Sprint(t["exchange"])}
		d.Count, _ = Int(t["count"])
		out = append(out, d)
	}
	return out
}

// DeathsText is the history as the learner reads it, newest first:
// "orders.wait expired 2, orders rejected 2"; article turns a sent
// (namespaced) queue name back into the lesson's.
func DeathsText(ds []Death, article func(string) string) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%s %s %d", article(d.Queue), d.Reason, d.Count))
	}
	return strings.Join(parts, ", ")
}

// Int reads a whole number from a header value, whichever integer type the
// broker (or amqp091-go's table decoding) gave it.
func Int(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case int:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint8:
		return int64(x), true
	}
	return 0, false
}

package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// answers is a passive declare that gives these counts in turn (an error
// where the count is negative), and counts how often it was asked.
func answers(counts ...int) (func() (amqp.Queue, error), *int) {
	asked := 0
	return func() (amqp.Queue, error) {
		n := counts[min(asked, len(counts)-1)]
		asked++
		if n < 0 {
			return amqp.Queue{}, errors.New("channel closed")
		}
		return amqp.Queue{Messages: n}, nil
	}, &asked
}

// RabbitMQ answers a quorum queue's passive declare with 0 messages when
// its leader is too busy to answer within 250 ms: a 0 is read again, at
// most rereads more times, and a nonzero count is believed at once.
func TestAQuorumQueuesZeroIsReadAgainUntilTheLeaderAnswers(t *testing.T) {
	for _, c := range []struct {
		name      string
		answers   []int
		want, ask int
	}{
		{"the leader answers on the third ask", []int{0, 0, 2}, 2, 3},
		{"a queue that stays empty: 1 + 4 rereads", []int{0}, 0, 5},
		{"a nonzero count at once", []int{3, 0}, 3, 1},
	} {
		declare, asked := answers(c.answers...)
		q, err := quorumDeclare(context.Background(), declare, 4, time.Millisecond)
		if err != nil || q.Messages != c.want || *asked != c.ask {
			t.Errorf("%s: got %d, %v after %d asks; want %d after %d", c.name, q.Messages, err, *asked, c.want, c.ask)
		}
	}
}

// The first answer's error is the caller's (a missing queue, a node down);
// a reread that fails leaves the answer the broker gave before it.
func TestAFailedRereadLeavesTheEarlierAnswerAndAFirstErrorIsReturned(t *testing.T) {
	declare, _ := answers(0, -1)
	if q, err := quorumDeclare(context.Background(), declare, 4, time.Millisecond); err != nil || q.Messages != 0 {
		t.Fatalf("got %d, %v; want the first answer, 0", q.Messages, err)
	}
	declare, asked := answers(-1)
	if _, err := quorumDeclare(context.Background(), declare, 4, time.Millisecond); err == nil || *asked != 1 {
		t.Fatalf("got err %v after %d asks; want the first error, at once", err, *asked)
	}
}

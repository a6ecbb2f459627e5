package consumer_test

import (
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/programs/consumer"
	"github.com/rmlab/lab/internal/services"
)

// A consumer with --follow-up publishes the next stage's message after its
// commit and before its ack, under an id every copy of the delivery shares.
func TestAFollowUpIsPublishedUnderAnIDEveryCopyShares(t *testing.T) {
	db := resetDB(t)
	q, ch := queue(t)
	next, _ := queue(t)
	publish(t, ch, q, "event-001", payment("event-001"))
	c := spawn(t, "c", nil, "--strategy", "one-tx", "--queue", q, "--count", "1", "--follow-up", next)
	if code := waitExit(t, c); code != 0 {
		t.Fatalf("exit %d\n%s", code, output(c))
	}
	if p := points(t, db, 7); p != 10 {
		t.Fatalf("points %d, want 10", p)
	}
	d, ok, err := ch.Get(services.Names{NS: nsOf(t)}.Name(next), true)
	if err != nil || !ok {
		t.Fatalf("no follow-up in %s (ok %v, %v):\n%s", next, ok, err, output(c))
	}
	if d.MessageId != "event-001/points-award" || d.Headers["x-follow-up-of"] != "event-001" || !strings.Contains(string(d.Body), "order:42:paid") {
		t.Fatalf("follow-up id %q headers %v body %s", d.MessageId, d.Headers, d.Body)
	}
	if !strings.Contains(output(c), "follow-up event-001/points-award published to "+next+" (confirmed)") {
		t.Fatalf("the log does not say the follow-up went out:\n%s", output(c))
	}
}

// Killed between its commit and its follow-up, the consumer leaves the
// delivery unacked. The redelivery meets the mark: with --follow-up-on
// handled it sends the follow-up anyway (one, never lost); with applied it
// sends none, and the next stage never hears of the order.
func TestAFollowUpLostToACrashIsSentByTheRedeliveryOnlyWhenHandledCounts(t *testing.T) {
	for _, c := range []struct {
		on   string
		want int
	}{{"handled", 1}, {"applied", 0}} {
		t.Run(c.on, func(t *testing.T) {
			db := resetDB(t)
			q, ch := queue(t)
			next, _ := queue(t)
			publish(t, ch, q, "event-001", payment("event-001"))
			args := []string{"--strategy", "one-tx", "--queue", q, "--follow-up", next, "--follow-up-on", c.on}
			c1 := spawn(t, "c1", []string{"before-follow-up"}, args...)
			waitPaused(t, c1, "before-follow-up")
			c1.Kill()
			c2 := spawn(t, "c2", nil, append(args, "--count", "1")...)
			if code := waitExit(t, c2); code != 0 {
				t.Fatalf("exit %d\n%s", code, output(c2))
			}
			if !strings.Contains(output(c2), "duplicate absorbed") {
				t.Fatalf("the redelivery was not absorbed:\n%s", output(c2))
			}
			if p := points(t, db, 7); p != 10 {
				t.Fatalf("points %d, want 10", p)
			}
			readyBecomes(t, ch, next, c.want)
			readyBecomes(t, ch, q, 0)
		})
	}
}

func TestAFollowUpNeedsAQueueAndAKnownMode(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--strategy", "one-tx", "--event", "e", "--key", "k", "--user", "1", "--amount", "1", "--follow-up", "next"}, "--follow-up needs --queue"},
		{[]string{"--strategy", "one-tx", "--queue", "q", "--follow-up", "next", "--follow-up-on", "always"}, `--follow-up-on "always": use handled or applied`},
	} {
		if _, err := consumer.ParseArgs(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}

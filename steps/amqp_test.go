package steps_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/steps"
)

// amqpRun is a run of a broker-part lesson under a namespace of its own, so
// tests running concurrently (and learners) never share a queue. The
// lesson's queues and exchanges are deleted again when the test ends.
func amqpRun(t *testing.T) *steps.Run {
	t.Helper()
	env := labtest.Connect(t)
	env.Queue("orders")
	env.Exchange("orders")
	l := &lab.Lesson{ID: "t", Part: lab.PartBroker}
	r := steps.NewRun(&steps.Env{Svc: env.Svc, Replay: true}, l, nil)
	t.Cleanup(func() {
		if res := r.Step(context.Background(), step("reset", "queues=orders exchanges=orders", "")); !res.Passed {
			t.Errorf("cleanup: %s", res.Why)
		}
		r.Close()
	})
	must(t, r, step("reset", "queues=orders exchanges=orders", ""))
	must(t, r, step("declare", "", "exchange orders type=direct\nqueue orders\nbind orders orders key=order.paid"))
	return r
}

const body = `{"event_id":"event-001","business_key":"order:42:paid","user_id":7,"amount":10}`

// The proxy swallows a real basic.ack frame: the publisher times out while
// the broker, asked directly, holds the message.
func TestLostConfirmTimesOutWhileTheBrokerHoldsTheMessage(t *testing.T) {
	r := amqpRun(t)
	must(t, r, step("proxy", "drop-confirm=1", ""))
	res := must(t, r, step("publish", "channel=pub via=proxy exchange=orders key=order.paid confirm id=event-001 timeout=1s", body))
	if !strings.Contains(res.Observed, "[DROPPED]") {
		t.Errorf("the wire log shows no dropped frame:\n%s", res.Observed)
	}
	must(t, r, step("expect", "", "confirm timeout\nready orders 1"))
	// The next publish on the channel is confirmed normally.
	must(t, r, step("publish", "channel=pub via=proxy exchange=orders key=order.paid confirm id=event-001", body))
	must(t, r, step("expect", "", "confirm ack\nready orders 2"))
	must(t, r, step("ledger", "variant=unsafe expect=duplicated", "intended: 1\napplied: broker: ready orders"))
}

// An unroutable mandatory publish is returned and still acked; without
// mandatory it is acked and silently dropped.
func TestUnroutablePublishIsAckedAndOnlyMandatoryReturnsIt(t *testing.T) {
	r := amqpRun(t)
	must(t, r, step("publish", "channel=pub exchange=orders key=order.refunded confirm id=event-001", body))
	must(t, r, step("expect", "", "confirm ack\nreturned 0\nready orders 0"))
	must(t, r, step("publish", "channel=pub exchange=orders key=order.refunded confirm mandatory id=event-001", body))
	must(t, r, step("expect", "", "confirm ack\nreturned 1"))
}

// Acking another channel's tag: Ack returns nil, the broker closes the
// channel with 406, and that channel's own delivery goes back to the queue.
func TestAckWithAnotherChannelsTagClosesThatChannelWith406(t *testing.T) {
	r := amqpRun(t)
	for i := 0; i < 3; i++ {
		must(t, r, step("publish", "channel=pub queue=orders confirm", body))
	}
	must(t, r, step("consume", "channel=A queue=orders count=2 prefetch=2", ""))
	must(t, r, step("expect", "", "tags 1 2\nunacked 2"))
	must(t, r, step("consume", "channel=B queue=orders count=1 prefetch=1", ""))
	must(t, r, step("expect", "", "tags 1"))
	res := must(t, r, step("ack", "channel=B tag=2 error=406", ""))
	if !strings.Contains(res.Observed, "PRECONDITION_FAILED - unknown delivery tag 2") || !strings.Contains(res.Observed, "returned nil") {
		t.Fatalf("the ack step does not show the asynchronous channel error:\n%s", res.Observed)
	}
	wait := step("queues", "", "orders")
	wait.Attrs["until"] = "ready 1"
	must(t, r, wait)
	// A reopened channel B counts from 1 again; the delivery is redelivered.
	must(t, r, step("consume", "channel=B queue=orders", ""))
	must(t, r, step("expect", "", "tags 1\nredelivered true"))
	must(t, r, step("ack", "channel=A tag=2 multiple", ""))
	must(t, r, step("expect", "", "fact settled 2\nunacked orders 1"))
}

// A connection cut right after the publish method frame: without confirm
// mode Publish returned nil and the message is gone; with it the publisher
// learns the outcome is unknown and can resend.
func TestCutAfterPublishLosesTheMessageAndOnlyConfirmModeNotices(t *testing.T) {
	r := amqpRun(t)
	must(t, r, step("proxy", "cut-after=basic.publish", ""))
	must(t, r, step("publish", "channel=fire via=proxy queue=orders error=closed", body))
	must(t, r, step("expect", "", "confirm none\nready orders 0"))
	must(t, r, step("proxy", "cut-after=basic.publish", ""))
	must(t, r, step("publish", "channel=careful via=proxy queue=orders confirm error=closed", body))
	must(t, r, step("expect", "", "confirm unknown"))
	must(t, r, step("publish", "channel=careful via=proxy queue=orders confirm", body))
	must(t, r, step("expect", "", "confirm ack\nready orders 1"))
}

// Reset deletes a queue only when the lab's mark says the lab created it.
func TestResetLeavesAQueueWithoutTheLabsMarkAlone(t *testing.T) {
	r := amqpRun(t)
	must(t, r, step("reset", "queues=orders exchanges=orders", ""))
	must(t, r, step("queues", "", "orders"))
	must(t, r, step("expect", "", "fact exists false"))
	// Someone else's queue under the lab's name: declared without the mark.
	svc := r.Env.Svc
	name := svc.Names.Name("orders")
	conn, err := services.DialAMQP(context.Background(), svc.Config.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.QueueDelete(name, false, false, false) })
	res := r.Step(context.Background(), step("reset", "queues=orders", ""))
	if res.Passed || !strings.Contains(res.Why, "did not create it") || !strings.Contains(res.Why, "nothing was deleted") {
		t.Fatalf("reset of an unmarked queue: passed=%t %s", res.Passed, res.Why)
	}
	must(t, r, step("queues", "", "orders"))
	must(t, r, step("expect", "", "fact exists true"))
}

func TestAMQPStepsRejectMalformedAttributesAtLoad(t *testing.T) {
	cases := []struct{ kind, attrs, body, want string }{
		{"publish", "via=carrier-pigeon", "{}", "via=carrier-pigeon"},
		{"publish", "queue=orders exchange=orders", "{}", "not both"},
		{"ack", "channel=A tag=first", "", "tag=\"first\""},
		{"declare", "", "queue orders type=mirrored", "type=mirrored"},
		{"declare", "", "topic orders", "start with exchange, queue or bind"},
		{"proxy", "", "", "sets nothing"},
		{"proxy", "cut-after=basic.deliver", "", "cut-after=basic.deliver"},
		{"broker-restart", "", "orders kept", "QUEUE gone or QUEUE ready N"},
		{"queues", "until=ready", "orders", "until="},
		{"consume", "channel=A", "", "needs queue="},
	}
	for _, c := range cases {
		k, ok := steps.Lookup(c.kind)
		if !ok {
			t.Fatalf("kind %s is not registered", c.kind)
		}
		s := step(c.kind, c.attrs, c.body)
		err := k.Check(s)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "t.md:") {
			t.Errorf("%s %s: got %v, want an error with t.md:LINE and %q", c.kind, c.attrs, err, c.want)
		}
	}
}

// nack with requeue puts the delivery back; it comes again, redelivered.
func TestNackWithRequeueBringsTheDeliveryBackRedelivered(t *testing.T) {
	r := amqpRun(t)
	must(t, r, step("publish", "channel=pub queue=orders confirm", body))
	must(t, r, step("consume", "channel=A queue=orders mode=get", ""))
	must(t, r, step("expect", "", "tags 1\nredelivered false\nunacked orders 1"))
	must(t, r, step("nack", "channel=A tag=last", ""))
	must(t, r, step("expect", "", "fact settled 1\nready orders 1\nunacked orders 0"))
	must(t, r, step("consume", "channel=A queue=orders mode=get", ""))
	must(t, r, step("expect", "", "tags 2\nredelivered true"))
	must(t, r, step("close", "channel=A", ""))
	must(t, r, step("expect", "", "fact requeued 1\nready orders 1"))
}

// allow-error accepts a refusal the brokers differ on, and success too.
func TestDeclareAllowErrorAcceptsEitherAnswer(t *testing.T) {
	r := amqpRun(t)
	// orders exists as a classic queue: redeclaring it as quorum is refused.
	res := must(t, r, step("declare", "allow-error=406", "queue orders type=quorum"))
	if !strings.Contains(res.Observed, "PRECONDITION_FAILED") {
		t.Fatalf("the refusal is not shown:\n%s", res.Observed)
	}
	must(t, r, step("declare", "allow-error=406", "queue orders"))
	res = r.Step(context.Background(), step("declare", "", "queue orders type=quorum"))
	if res.Passed || !strings.Contains(res.Why, "406") {
		t.Fatalf("without allow-error the refusal must fail the step: %+v", res)
	}
}

// A consume the broker refuses fails the step unless error= names the code;
// one that error= expected to fail and did not fails too. Nothing counts as
// delivered, and the channel named again opens afresh.
func TestConsumeRefusedByTheBrokerPassesOnlyWhenErrorNamesItsCode(t *testing.T) {
	r := amqpRun(t)
	if res := r.Step(context.Background(), step("consume", "channel=A queue=missing timeout=2s", "")); res.Passed {
		t.Fatalf("a consume of a queue that does not exist passed: %s", res.Observed)
	} else if !strings.Contains(res.Why, "404") {
		t.Errorf("the failure does not say 404: %s", res.Why)
	}
	res := must(t, r, step("consume", "channel=A queue=missing timeout=2s error=541,404", ""))
	if !strings.Contains(res.Observed, "basic.consume refused after") {
		t.Errorf("the refusal is not shown: %s", res.Observed)
	}
	must(t, r, step("expect", "", "delivered 0"))
	must(t, r, step("publish", "channel=pub queue=orders confirm", body))
	if res := r.Step(context.Background(), step("consume", "channel=A queue=orders timeout=2s error=404", "")); res.Passed {
		t.Fatalf("a consume the broker took passed although error=404 was wanted: %s", res.Observed)
	} else if !strings.Contains(res.Why, "wanted error 404") {
		t.Errorf("the failure does not say what was wanted: %s", res.Why)
	}
	must(t, r, step("expect", "", "delivered 1"))
}

// A ledger's broker: figure for a queue that does not exist is an error,
// not 0: a misspelt queue made an unsafe "lost" hold whatever happened.
func TestALedgersBrokerFigureForAMissingQueueFailsInsteadOfReadingZero(t *testing.T) {
	r := newRun(t)
	must(t, r, step("declare", "", "queue orders"))
	res := r.Step(context.Background(), step("ledger", "variant=unsafe expect=lost", "intended: 1\napplied: broker: ready ordrs"))
	if res.Passed || !strings.Contains(res.Why+res.Observed, "does not exist") {
		t.Fatalf("a misspelt queue's ledger passed: %+v", res)
	}
	must(t, r, step("ledger", "variant=unsafe expect=lost", "intended: 1\napplied: broker: ready orders"))
}

// A consume that gets fewer deliveries than count= fails (it used to pass
// with none), unless up-to says fewer may come.
func TestConsumeFailsOnFewerDeliveriesThanCountUnlessUpTo(t *testing.T) {
	r := amqpRun(t)
	must(t, r, step("publish", "channel=pub queue=orders confirm", body))
	res := r.Step(context.Background(), step("consume", "channel=A queue=orders count=2 timeout=300ms", ""))
	if res.Passed || !strings.Contains(res.Why, "1 of 2 deliveries arrived") {
		t.Fatalf("a consume of 2 that got 1 passed: %+v", res)
	}
	must(t, r, step("publish", "channel=pub queue=orders confirm", body))
	must(t, r, step("consume", "channel=A queue=orders count=3 up-to timeout=300ms", ""))
	must(t, r, step("expect", "", "delivered 1"))
}

// A message still in its queue is waiting, not lost: the ledger finds it by
// its message id, and only that id counts.
func TestALedgerCountsAMessageStillQueuedAsWaitingNotLost(t *testing.T) {
	r := amqpRun(t)
	must(t, r, step("publish", "channel=pub queue=orders confirm id=event-bad", body))
	must(t, r, step("publish", "channel=pub queue=orders confirm id=event-good", body))
	res := must(t, r, step("ledger", "variant=unsafe expect=waiting", "intended: 1\napplied: 0\nwaiting: broker: holds orders event-good"))
	if res.Ledger.Waiting != 1 || res.Ledger.Lost != 0 || res.Ledger.Verdict() != "waiting" {
		t.Fatalf("ledger %+v, verdict %q", res.Ledger, res.Ledger.Verdict())
	}
	// Looking hands every message back.
	must(t, r, step("queues", "", "orders"))
	must(t, r, step("expect", "", "ready orders 2"))
	// An id the queue does not hold is not waiting: the ledger says lost.
	if res := r.Step(context.Background(), step("ledger", "variant=unsafe expect=waiting", "intended: 1\napplied: 0\nwaiting: broker: holds orders event-gone")); res.Passed || res.Ledger.Verdict() != "lost" {
		t.Fatalf("a message the queue does not hold counted as waiting: %+v", res)
	}
	// A queue every node serves has nothing unavailable.
	if res := r.Step(context.Background(), step("ledger", "variant=unsafe expect=unavailable", "intended: 1\napplied: 0\nunavailable: broker: unavailable orders")); res.Passed || res.Ledger.Unavailable != 0 {
		t.Fatalf("a readable queue counted as unavailable: %+v", res)
	}
}

// A stream is read from where a consume says; a second offset on a channel
// that already consumes the stream would be ignored (it reads on from
// where it was), so the step fails saying to name a new channel.
func TestAStreamIsReadAgainFromAnOffsetAndAnOffsetIsSaidOncePerChannel(t *testing.T) {
	r := amqpRun(t)
	labtest.Connect(t).Queue("orders.stream")
	must(t, r, step("reset", "queues=orders.stream", ""))
	must(t, r, step("declare", "", "queue orders.stream type=stream"))
	for _, id := range []string{"event-001", "event-002"} {
		must(t, r, step("publish", "queue=orders.stream confirm id="+id, body))
	}
	read := func(ch, off string, n int) lab.Result {
		return r.Step(context.Background(), step("consume", fmt.Sprintf("channel=%s queue=orders.stream offset=%s prefetch=10 count=%d timeout=5s", ch, off, n), ""))
	}
	if res := read("s1", "first", 2); !res.Passed {
		t.Fatalf("from first: %s", res.Why)
	}
	must(t, r, step("ack", "channel=s1 tag=last multiple", ""))
	if res := read("s2", "first", 2); !res.Passed {
		t.Fatalf("from first again, after s1's acks: %s", res.Why)
	}
	res := read("s3", "1", 1)
	if !res.Passed || !strings.Contains(res.Observed, "x-stream-offset=1") || strings.Contains(res.Observed, "x-stream-offset=0") {
		t.Fatalf("from offset 1: %s\n%s", res.Why, res.Observed)
	}
	if res := read("s3", "first", 1); res.Passed || !strings.Contains(res.Why, "already consumes orders.stream") {
		t.Errorf("a second offset on a consuming channel: passed %v (%s)", res.Passed, res.Why)
	}
}

package steps

import (
	"context"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/broker"
)

func init() { RegisterResetHook(outboxBrokerReset) }

// outboxBrokerReset deletes the queues and exchanges an outbox lesson's
// reset step lists (queues=a,b exchanges=x), namespaced, and only those
// carrying the lab's mark (the declare step marks what it creates). The
// broker part's hook does the same for its own lessons.
func outboxBrokerReset(ctx context.Context, r *Run, s *lab.Step) ([]string, error) {
	if r.Lesson == nil || r.Lesson.Part != lab.PartOutbox {
		return nil, nil
	}
	qs, xs := splitList(s.Attrs["queues"]), splitList(s.Attrs["exchanges"])
	if len(qs)+len(xs) == 0 {
		return nil, nil
	}
	cl := broker.NewClient(r.Env.Svc.Config.AMQP)
	defer cl.Close()
	var lines []string
	for _, set := range []struct {
		kind  string
		names []string
	}{{"queue", qs}, {"exchange", xs}} { // queues first: deleting them drops their bindings
		for _, n := range set.names {
			note, err := cl.Remove(ctx, set.kind, r.Env.Svc.Names.Name(n))
			if err != nil {
				return lines, err
			}
			if note != "" {
				lines = append(lines, note)
			}
		}
	}
	return lines, nil
}

package steps

import (
	"context"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/broker"
)

func init() { RegisterResetHook(idemBrokerReset) }

// idemBrokerReset deletes the queues an idempotency lesson's reset step
// lists (queues=payments), namespaced, and only those carrying the lab's
// mark, as the broker and outbox parts do for theirs. Each part's hook acts
// only for its own lessons, so a queue is never deleted twice.
func idemBrokerReset(ctx context.Context, r *Run, s *lab.Step) ([]string, error) {
	if r.Lesson == nil || r.Lesson.Part != lab.PartIdempotency {
		return nil, nil
	}
	qs := splitList(s.Attrs["queues"])
	if len(qs) == 0 {
		return nil, nil
	}
	cl := broker.NewClient(r.Env.Svc.Config.AMQP)
	defer cl.Close()
	var lines []string
	for _, n := range qs {
		note, err := cl.Remove(ctx, "queue", r.Env.Svc.Names.Name(n))
		if err != nil {
			return lines, err
		}
		if note != "" {
			lines = append(lines, note)
		}
	}
	return lines, nil
}

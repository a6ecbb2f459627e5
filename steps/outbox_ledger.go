package steps

import (
	"context"
	"fmt"
	"strings"

	lab "github.com/rmlab/lab"
)

func init() { registerSource("outbox", outboxSource) }

// outboxSource reads the outbox lessons' downstream figures. The relay
// publishes to a fanout exchange bound to the consumer's queue and to an
// audit queue nobody consumes, so the audit queue counts every publish the
// broker took, and the difference is what the consumer took (and acked).
//
//	delivered: outbox: delivered orders.audit orders
//	absorbed:  outbox: delivered orders.audit orders minus SELECT COUNT(*) FROM blog_idempotency_lab.consumed_operation
func outboxSource(ctx context.Context, r *Run, s *lab.Step, expr string) (int, error) {
	head, sub, hasMinus := strings.Cut(expr, " minus ")
	f := strings.Fields(head)
	if len(f) != 3 || f[0] != "delivered" {
		return 0, fmt.Errorf("outbox: %q: write outbox: delivered AUDIT_QUEUE QUEUE [minus SELECT ...]", expr)
	}
	all, err := brokerSource(ctx, r, s, "ready "+f[1])
	if err != nil {
		return 0, err
	}
	left, err := brokerSource(ctx, r, s, "ready "+f[2])
	if err != nil {
		return 0, err
	}
	n := all - left
	if hasMinus {
		v, _, err := r.figure(ctx, s, strings.TrimSpace(sub))
		if err != nil {
			return 0, err
		}
		n -= v
	}
	return n, nil
}

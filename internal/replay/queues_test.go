package replay_test

import (
	"context"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/services"
)

// queuesFor reads queue state at the broker for the queue panel and ledgers.
func queuesFor(svc *services.Services) func(context.Context, []string) ([]lab.QueueStat, error) {
	return broker.QueueReader(svc)
}

package cleaner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/services"
)

// A laptop with Docker only has no MySQL, RabbitMQ or Redis running: lab
// clean says there is nothing of the lab's there and does not fail. A
// server that should answer and does not is still a failure.
func TestAServerNotRunningHereIsNoFailureButOneThatShouldAnswerIs(t *testing.T) {
	down := errors.New("connect: connection refused")
	svc := &services.Services{Config: services.Config{AMQP: "amqp://guest:guest@127.0.0.1:1/"}}
	svc.Info.MySQLErr, svc.Info.AMQPErr, svc.Info.RedisErr = down, down, down
	for _, absent := range []bool{true, false} {
		var out strings.Builder
		cl := cleaner.New(context.Background(), svc, cleaner.Names{}, &out)
		if absent {
			for _, what := range []string{"databases", "queues and exchanges", "Redis keys"} {
				cl.Absent(what, "no server runs at its default address")
			}
		}
		cl.Namespace(context.Background(), services.Names{NS: "x"})
		cl.Close()
		if cl.Failed() == absent {
			t.Errorf("absent %t: failed %t\n%s", absent, cl.Failed(), out.String())
		}
		if absent && strings.Count(out.String(), "none ") != 3 {
			t.Errorf("the three stores not running are not each said:\n%s", out.String())
		}
	}
}

package steps_test

import (
	"context"
	"testing"
	"time"

	"github.com/rmlab/lab/services"
)

// A statement that has ended is never reported as still waiting: Await(0),
// behind `expect waiting`, once picked at random between the ended
// statement and its expired timer.
func TestAnEndedStatementIsNeverReportedAsWaiting(t *testing.T) {
	r := newRun(t)
	must(t, r, step("reset", "db=blog_idempotency_lab", ""))
	sess, err := r.Session(context.Background(), "probe", r.Env.Svc.Names.Name(services.IdempotencyDB))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		sess.Start("SELECT 1")
		deadline := time.Now().Add(5 * time.Second)
		for sess.Waiting() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if sess.Waiting() {
			t.Fatalf("SELECT 1 still running after 5 s")
		}
		if o := sess.Await(0); o == nil || o.Pending {
			t.Fatalf("try %d: an ended statement came back as %+v", i, o)
		}
	}
}

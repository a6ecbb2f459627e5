package steps_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/steps"
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

// On the screen a lesson's sessions wait for a lock up to
// steps.ScreenLockWait (a learner reading past InnoDB's 50 s made B's
// statement end with 1205 mid-lesson), and the run says the limit the
// screen shows; replay keeps the server's.
func TestAScreenSessionWaitsTenMinutesForALockAndReplayKeepsTheServers(t *testing.T) {
	r := newRun(t)
	must(t, r, step("reset", "db=blog_idempotency_lab", ""))
	db := r.Env.Svc.Names.Name(services.IdempotencyDB)
	ctx := context.Background()
	if _, err := r.Session(ctx, "B", db); err != nil {
		t.Fatal(err)
	}
	var global float64
	if err := r.Env.Svc.MySQL.QueryRow("SELECT @@GLOBAL.innodb_lock_wait_timeout").Scan(&global); err != nil {
		t.Fatal(err)
	}
	if got, want := r.LockWait("B"), time.Duration(global*float64(time.Second)); got != want || got == 0 {
		t.Errorf("replay's session waits up to %s, want the server's %s", got, want)
	}
	screen := steps.NewRun(&steps.Env{Svc: r.Env.Svc}, r.Lesson, nil)
	defer screen.Close()
	s, err := screen.Session(ctx, "B", db)
	if err != nil {
		t.Fatal(err)
	}
	if got := screen.LockWait("B"); got != steps.ScreenLockWait {
		t.Errorf("the screen's session waits up to %s, want %s", got, steps.ScreenLockWait)
	}
	s.Start("SELECT @@SESSION.innodb_lock_wait_timeout")
	if o := s.Await(5 * time.Second); o == nil || o.ErrCode != "" || fmt.Sprint(o.Rows) != "[[600]]" {
		t.Errorf("the server holds %+v for the session, want 600", o)
	}
}

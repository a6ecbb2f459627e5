package steps_test

import (
	"context"
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/steps"
)

// participantRun is a run as a workshop participant of the test's
// namespace: a MySQL user granted its two databases only, and, with watch,
// the lab's own login reading InnoDB's transactions for it.
func participantRun(t *testing.T, watch bool) (*steps.Run, *labtest.Env) {
	t.Helper()
	env := labtest.Connect(t, labtest.MySQL)
	ctx := context.Background()
	r := steps.NewRun(&steps.Env{Svc: env.Svc, Replay: true}, &lab.Lesson{ID: "t", Tables: []lab.TableView{{DB: services.IdempotencyDB}}}, nil)
	must(t, r, step("reset", "db=blog_idempotency_lab", ""))
	r.Close()
	dsn, err := services.MakeParticipantUser(ctx, env.Svc.MySQL, env.Svc.Config.MySQL, env.NS, 10)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { services.DropLabUsers(context.Background(), env.Svc.MySQL, env.NS) })
	twin, err := env.Svc.WithMySQL(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { twin.MySQL.Close() })
	if watch {
		twin.Watch = &services.Watch{DB: env.Svc.MySQL, User: services.ParticipantUser(env.NS)}
	}
	r = steps.NewRun(&steps.Env{Svc: twin, Replay: true}, &lab.Lesson{ID: "t", Tables: []lab.TableView{{DB: services.IdempotencyDB}}}, nil)
	t.Cleanup(r.Close)
	return r, env
}

// Lesson 1's count of the other open transactions, as a participant whose
// login has no PROCESS: it counts the participant's own open transaction
// and not one another login holds open beside it.
func TestAParticipantSeesItsOwnOpenTransactionsAndNoOneElses(t *testing.T) {
	r, env := participantRun(t, true)
	// Someone else's transaction, open on the same server.
	other, err := env.Svc.MySQL.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, st := range []string{"CREATE TEMPORARY TABLE t_other (a INT) ENGINE=InnoDB", "START TRANSACTION", "INSERT INTO t_other VALUES (1)"} {
		if _, err := other.ExecContext(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	defer other.ExecContext(context.Background(), "ROLLBACK")
	must(t, r, step("sql", "session=A", "START TRANSACTION;\nINSERT INTO consumed_operation VALUES('points-award','order:42:paid','event-001',7,10);"))
	count := "SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID=t.trx_mysql_thread_id WHERE p.ID<>CONNECTION_ID();"
	must(t, r, step("sql", "session=C", count))
	must(t, r, step("expect", "", "value 1"))
	must(t, r, step("sql", "session=C", "SELECT COUNT(*) FROM information_schema.INNODB_TRX;"))
	must(t, r, step("expect", "", "value 1"))
	must(t, r, step("sql", "session=A", "ROLLBACK;"))
	must(t, r, step("sql", "session=C", count))
	must(t, r, step("expect", "", "value 0"))
	// The process list, too, is the participant's own sessions only.
	res := must(t, r, step("sql", "session=C", "SELECT DISTINCT USER FROM information_schema.PROCESSLIST;"))
	if got := strings.Join(strings.Fields(res.Observed), " "); !strings.Contains(got, services.ParticipantUser(env.NS)) || strings.Contains(got, "root") {
		t.Fatalf("the participant's process list: %s", res.Observed)
	}
}

// Without the lab's reading, the participant's login itself is refused:
// it has no PROCESS, so the watched case above is not the login's own view.
func TestAParticipantsOwnLoginCannotReadInnoDBsTransactions(t *testing.T) {
	r, _ := participantRun(t, false)
	res := r.Step(context.Background(), step("sql", "session=C", "SELECT COUNT(*) FROM information_schema.INNODB_TRX;"))
	if res.Passed || !strings.Contains(res.Why, "1227") {
		t.Fatalf("a participant's login read INNODB_TRX: %+v", res)
	}
}

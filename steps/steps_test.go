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

func TestMain(m *testing.M) { labtest.Main(m) }

// newRun is a run of an idempotency-part lesson in a namespace of the
// test's own.
func newRun(t *testing.T) *steps.Run {
	t.Helper()
	env := labtest.Connect(t)
	l := &lab.Lesson{ID: "t", Tables: []lab.TableView{{DB: services.IdempotencyDB}}}
	r := steps.NewRun(&steps.Env{Svc: env.Svc, Replay: true}, l, nil)
	t.Cleanup(r.Close)
	return r
}

func step(kind, attrs, body string) *lab.Step {
	s := &lab.Step{Kind: kind, Attrs: map[string]string{}, Body: body, File: "t.md", Line: 1}
	for _, f := range strings.Fields(attrs) {
		k, v, _ := strings.Cut(f, "=")
		s.Attrs[k] = v
	}
	return s
}

func must(t *testing.T, r *steps.Run, s *lab.Step) lab.Result {
	t.Helper()
	res := r.Step(context.Background(), s)
	if !res.Passed {
		t.Fatalf("%s step: %s\n%s", s.Kind, res.Why, res.Observed)
	}
	return res
}

// The waiting statement is blocked inside InnoDB (the server reports a lock
// wait for its thread), not sleeping in Go, and later steps run meanwhile.
func TestBlockedInsertWaitsInsideInnoDBWhileLaterStepsRun(t *testing.T) {
	r := newRun(t)
	must(t, r, step("reset", "db=blog_idempotency_lab", ""))
	must(t, r, step("sql", "session=A", "START TRANSACTION;\nINSERT INTO consumed_operation VALUES('points-award','order:42:paid','event-001',7,10);"))
	res := must(t, r, step("sql", "session=B blocks grace=300ms", "START TRANSACTION;\nINSERT INTO consumed_operation VALUES('points-award','order:42:paid','event-002',7,10);"))
	if !strings.Contains(res.Observed, "still waiting") {
		t.Fatalf("B did not wait: %s", res.Observed)
	}
	must(t, r, step("expect", "", "waiting"))
	// The server sees B's transaction waiting for a lock.
	must(t, r, step("sql", "session=C", "SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE t.trx_state='LOCK WAIT' AND p.DB='"+r.Env.Svc.Names.Name(services.IdempotencyDB)+"';"))
	must(t, r, step("expect", "", "value 1"))
	must(t, r, step("sql", "session=A", "COMMIT;"))
	res = must(t, r, step("await", "session=B error=1062", ""))
	must(t, r, step("expect", "", "error 1062\nelapsed >= 300ms"))
	_ = res
}

func TestUnexpectedSQLErrorFailsTheStepAndNamesTheError(t *testing.T) {
	r := newRun(t)
	must(t, r, step("reset", "db=blog_idempotency_lab", ""))
	res := r.Step(context.Background(), step("sql", "", "INSERT INTO points_account VALUES(7,0);"))
	if res.Passed || !strings.Contains(res.Why, "1062") {
		t.Fatalf("got %+v", res)
	}
}

func TestLedgerCountsFromQueriesAndJudgesTheVerdict(t *testing.T) {
	r := newRun(t)
	must(t, r, step("reset", "db=blog_idempotency_lab", ""))
	must(t, r, step("sql", "", "UPDATE points_account SET points=20 WHERE user_id=7;"))
	res := must(t, r, step("ledger", "variant=unsafe expect=duplicated", "intended: 1\napplied: SELECT points DIV 10 FROM points_account WHERE user_id=7"))
	if res.Ledger.Twice != 1 || res.Ledger.Lost != 0 || res.Ledger.Applied != 2 {
		t.Fatalf("ledger %+v", res.Ledger)
	}
	res = r.Step(context.Background(), step("ledger", "variant=safe expect=lost", "intended: 1\napplied: SELECT points DIV 10 FROM points_account WHERE user_id=7"))
	if res.Passed {
		t.Fatal("a ledger whose verdict differs from expect= passed")
	}
}

func TestReplayShortensLeasesAndTheTextShownCarriesTheValue(t *testing.T) {
	r := newRun(t)
	if got := r.Expand("INTERVAL ${lease:30} SECOND"); got != "INTERVAL 3 SECOND" {
		t.Fatalf("got %q", got)
	}
	r.Env.Replay = false
	if got := r.Expand("INTERVAL ${lease:30} SECOND"); got != "INTERVAL 30 SECOND" {
		t.Fatalf("got %q", got)
	}
}

func TestRedisKeysGetTheNamespace(t *testing.T) {
	r := newRun(t)
	must(t, r, step("reset", "redis=lab:*", ""))
	must(t, r, step("redis", "", "SET lab:k 5"))
	res := must(t, r, step("ledger", "variant=safe", "intended: 5\napplied: redis: GET lab:k"))
	if res.Ledger.Applied != 5 || !strings.Contains(strings.Join(res.Sent, " "), "lab:k") {
		t.Fatalf("%+v %v", res.Ledger, res.Sent)
	}
	v, err := r.Env.Svc.Redis.Get(context.Background(), "lab_"+r.Env.Svc.Names.NS+":k").Result()
	if err != nil || v != "5" {
		t.Fatalf("namespaced key: %q %v", v, err)
	}
}

// An expectation names the article's Redis key; what a program prints
// carries the learner's namespace, and the two must still match.
func TestContainsMatchesARedisKeyInTheLearnersNamespace(t *testing.T) {
	r := newRun(t)
	// The redis step namespaces every lab: argument, the value too, so the
	// reply carries a namespaced key as a program's log line would.
	must(t, r, step("redis", "", "SET lab:contains-check lab:inner"))
	must(t, r, step("redis", "", "GET lab:contains-check"))
	must(t, r, step("expect", "", "contains lab:inner"))
	must(t, r, step("redis", "", "DEL lab:contains-check"))
	if res := r.Step(context.Background(), step("expect", "", "contains lab:inner")); res.Passed {
		t.Fatalf("matched a reply without the key: %s", res.Observed)
	}
}

// What a node that is down still holds is neither applied nor lost: a
// ledger's unavailable (like waiting) takes those orders out of lost, and
// the verdict says so. Lesson 19 rests on it.
func TestALedgerCountsWhatNoNodeServesAsUnavailableNotLost(t *testing.T) {
	r := newRun(t)
	for _, c := range []struct {
		field, verdict string
	}{{"unavailable", "unavailable"}, {"waiting", "waiting"}} {
		res := r.Step(context.Background(), step("ledger", "variant=safe expect="+c.verdict, "intended: 3\napplied: 1\n"+c.field+": 2"))
		if !res.Passed || res.Ledger == nil || res.Ledger.Lost != 0 || res.Ledger.Verdict() != c.verdict {
			t.Errorf("%s 2 of 3: %+v (%s); want verdict %s, nothing lost", c.field, res.Ledger, res.Why, c.verdict)
		}
	}
	res := r.Step(context.Background(), step("ledger", "variant=safe expect=unavailable", "intended: 3\napplied: 1\nunavailable: 1"))
	if res.Passed || res.Ledger.Lost != 1 {
		t.Errorf("one of three neither applied nor unavailable: %+v passed %v; want lost 1 and a failed expect=unavailable", res.Ledger, res.Passed)
	}
}

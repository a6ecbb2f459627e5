package steps_test

import (
	"context"
	"errors"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/steps"
)

// The screen reads a lesson's tables through the run: a database not made
// yet and a table not made yet are errors it can word, not driver numbers;
// a table that is there comes back with its rows, NULL as NULL.
func TestTablesSayWhatIsMissingAndReadWhatIsThere(t *testing.T) {
	e := labtest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	env := &steps.Env{Svc: e.Svc}
	views := []lab.TableView{
		{Title: "marks", DB: services.IdempotencyDB, Query: "SELECT business_key, NULLIF(event_id, 'e') FROM consumed_operation"},
		{Title: "nothing", DB: services.IdempotencyDB, Query: "SELECT * FROM no_such_table"},
	}
	got := env.Tables(ctx, views)
	if !errors.Is(got[0].Err, steps.ErrNoDatabase) || !errors.Is(got[1].Err, steps.ErrNoDatabase) {
		t.Fatalf("before the reset: %v, %v; want ErrNoDatabase", got[0].Err, got[1].Err)
	}
	db := e.Database(services.IdempotencyDB)
	if _, err := e.Svc.MySQL.ExecContext(ctx, "INSERT INTO "+db+".consumed_operation (consumer_name, business_key, event_id, user_id, amount) VALUES ('c', 'k1', 'e', 1, 1)"); err != nil {
		t.Fatal(err)
	}
	got = steps.NewRun(env, nil, nil).Tables(ctx, views)
	if got[0].Err != nil || got[0].DB != db || len(got[0].Rows) != 1 || got[0].Rows[0][0] != "k1" || got[0].Rows[0][1] != "NULL" {
		t.Errorf("marks: %+v; want one row k1 | NULL from %s", got[0], db)
	}
	if !errors.Is(got[1].Err, steps.ErrNoTable) {
		t.Errorf("a missing table: %v, want ErrNoTable", got[1].Err)
	}
	if got := (&steps.Env{}).Tables(ctx, views); !errors.Is(got[0].Err, steps.ErrNoMySQL) {
		t.Errorf("without MySQL: %v, want ErrNoMySQL", got[0].Err)
	}
}

// A read cut by its deadline (a poll on a loaded machine) leaves every view
// after it with the deadline, which the screen words, not the "connection
// is already closed" the closed connection would say.
func TestAReadCutByItsDeadlineGivesEveryLaterViewTheDeadline(t *testing.T) {
	e := labtest.Connect(t, labtest.MySQL)
	e.Database(services.IdempotencyDB)
	env := &steps.Env{Svc: e.Svc}
	views := []lab.TableView{
		{Title: "slow", DB: services.IdempotencyDB, Query: "SELECT SLEEP(3)"},
		{Title: "after", DB: services.IdempotencyDB, Query: "SELECT * FROM consumed_operation"},
		{Title: "and after", DB: services.IdempotencyDB, Query: "SELECT * FROM points_account"},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	got := env.Tables(ctx, views)
	for i, r := range got {
		if !errors.Is(r.Err, context.DeadlineExceeded) {
			t.Errorf("view %d (%s): %v, want the deadline", i, r.Title, r.Err)
		}
	}
}

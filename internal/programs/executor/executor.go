// Package executor sends the SMS tasks the SMS consumer queued in sms_task
// (sql/idempotency/sms_task.sql) through the SMS provider. The call to the
// provider is outside any database transaction: the executor counts an
// attempt, calls, and only then records SENT, so dying after the call and
// before the record makes the next executor call again. With the task id as
// the Idempotency-Key, the provider recognises that retry.
//
//	lab worker executor [--name N] [--pause-at p1,p2] --provider http://ADDR [--no-key] [--db blog_idempotency_lab]
//
// It handles every NEW task, oldest first, then exits. Pause points, per
// task: claimed (attempts+1 committed), before-call, after-call,
// after-record (SENT committed).
package executor

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/rmlab/lab/internal/programs/provider"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Points are the pause points `lab worker executor` announces, in the order a
// message meets them; a lesson's spawn pause-at= and wait until= are
// checked against them when it loads.
var Points = []string{"claimed", "before-call", "after-call", "after-record"}

// Executor sends tasks from one database through one provider.
type Executor struct {
	DB       *sql.DB
	DBName   string
	Provider provider.Client
	NoKey    bool // send no Idempotency-Key (the unsafe retry)
	P        *worker.Parent
}

// Main is `lab worker executor`.
func Main(ctx context.Context, p *worker.Parent, args []string) error {
	fs := flag.NewFlagSet("lab worker executor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("provider", "", "the SMS provider's base URL; lessons pass ${provider}")
	noKey := fs.Bool("no-key", false, "call without an Idempotency-Key")
	dbArticle := fs.String("db", services.IdempotencyDB, "article database name (namespace added)")
	if err := fs.Parse(args); err != nil {
		return worker.FlagError("lab worker executor", fs, err)
	}
	if *base == "" {
		return fmt.Errorf("lab worker executor: --provider is required: the SMS provider's base URL, which `lab worker provider` logs when it listens (lessons pass ${provider})")
	}
	w, err := services.OpenWorker(ctx, *dbArticle, services.NoChannel)
	if err != nil {
		return err
	}
	defer w.Close()
	e := &Executor{DB: w.DB, DBName: w.Names.Name(*dbArticle), Provider: provider.Client{Base: *base}, NoKey: *noKey, P: p}
	n, err := e.Run(ctx)
	if err != nil {
		return err
	}
	p.Logf("no NEW task left: %d sent in this run", n)
	return nil
}

// Task is one row of sms_task.
type Task struct {
	ID       string
	UserID   int64
	Body     string
	Attempts int
}

var errNone = errors.New("no NEW task")

// Run sends every NEW task and returns how many it recorded as SENT.
func (e *Executor) Run(ctx context.Context) (int, error) {
	n := 0
	for {
		err := e.one(ctx)
		if errors.Is(err, errNone) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

func (e *Executor) reach(ctx context.Context, point string) error {
	if e.P == nil {
		return nil
	}
	return e.P.Reach(ctx, point)
}

func (e *Executor) logf(format string, args ...any) {
	if e.P != nil {
		e.P.Logf(format, args...)
	}
}

// one sends the oldest NEW task.
func (e *Executor) one(ctx context.Context) error {
	var t Task
	err := e.DB.QueryRowContext(ctx, stmtNextTask).Scan(&t.ID, &t.UserID, &t.Body, &t.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return errNone
	}
	if err != nil {
		return fmt.Errorf("read sms_task in %s: %w (does the table exist? the lesson creates it with sql/idempotency/sms_task.sql)", e.DBName, err)
	}
	// Count the attempt before calling: the count survives a crash.
	res, err := e.DB.ExecContext(ctx, stmtClaim, t.ID)
	if err != nil {
		return fmt.Errorf("claim task %s: %w", t.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // someone else finished it meanwhile; look again
	}
	t.Attempts++
	if err := e.reach(ctx, "claimed"); err != nil {
		return err
	}
	key := t.ID
	how := "Idempotency-Key: " + key
	if e.NoKey {
		key, how = "", "no Idempotency-Key"
	}
	e.logf("task %s attempt %d: POST /sms to user %d, %s", t.ID, t.Attempts, t.UserID, how)
	if err := e.reach(ctx, "before-call"); err != nil {
		return err
	}
	reply, code, err := e.Provider.Send(ctx, key, provider.Request{To: t.UserID, Text: t.Body})
	if err != nil {
		return fmt.Errorf("task %s stays NEW for a later attempt: %w", t.ID, err)
	}
	if reply.Replayed {
		e.logf("provider answered %d, Idempotent-Replayed: %s was already sent, nothing sent now", code, reply.MessageID)
	} else {
		e.logf("provider answered %d: sent %s", code, reply.MessageID)
	}
	if err := e.reach(ctx, "after-call"); err != nil {
		return err
	}
	res, err = e.DB.ExecContext(ctx, stmtRecordSent, reply.MessageID, t.ID)
	if err != nil {
		return fmt.Errorf("record task %s as SENT: %w", t.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		e.logf("task %s was already recorded by someone else", t.ID)
	} else {
		e.logf("task %s recorded SENT (%s)", t.ID, reply.MessageID)
	}
	return e.reach(ctx, "after-record")
}

// Package batch is `lab worker batch-consumer`: a consumer that takes a
// prefetched batch of deliveries and works on them concurrently, one
// InnoDB transaction each, the way a worker pool does. The last delivery
// finishes first; the consumer then acknowledges it either alone
// (--ack single) or with multiple=true (--ack multiple), which also settles
// every earlier delivery of the channel — including the ones still being
// processed. Killed at after-ack, the first loses those deliveries for good,
// the second gets them redelivered.
//
//	lab worker batch-consumer [--name N] [--pause-at p] --queue orders [--count 3] --ack single|multiple
//
// Points, in order: received (the whole batch is in), processing (every
// transaction is open, nothing committed), after-commit (the last delivery
// committed), after-ack, done (the rest committed and acked).
package batch

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Points are the pause points `lab worker batch-consumer` announces, in the order a
// message meets them; a lesson's spawn pause-at= and wait until= are
// checked against them when it loads.
var Points = []string{"received", "processing", "after-commit", "after-ack", "done"}

// Options are the program's flags.
type Options struct {
	Queue    string
	Count    int
	Multiple bool
	Consumer string
	DB       string
}

// ParseArgs reads the flags the worker layer left.
func ParseArgs(args []string) (Options, error) {
	var o Options
	fs := flag.NewFlagSet("lab worker batch-consumer", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.Queue, "queue", "", "queue to consume (article name)")
	fs.IntVar(&o.Count, "count", 3, "deliveries in the batch (the prefetch)")
	ack := fs.String("ack", "", "single or multiple")
	fs.StringVar(&o.Consumer, "consumer", "points-award", "consumer_name of the mark")
	fs.StringVar(&o.DB, "db", services.IdempotencyDB, "article database (namespace added)")
	if err := fs.Parse(args); err != nil {
		return o, worker.FlagError("lab worker batch-consumer", fs, err)
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("lab worker batch-consumer: unexpected argument %q", fs.Arg(0))
	case o.Queue == "":
		return o, fmt.Errorf("lab worker batch-consumer: --queue NAME is required")
	case o.Count < 2:
		return o, fmt.Errorf("lab worker batch-consumer: --count must be at least 2 (a batch)")
	case *ack != "single" && *ack != "multiple":
		return o, fmt.Errorf("lab worker batch-consumer: --ack single or --ack multiple")
	}
	o.Multiple = *ack == "multiple"
	return o, nil
}

type message struct {
	EventID     string `json:"event_id"`
	BusinessKey string `json:"business_key"`
	UserID      int64  `json:"user_id"`
	Amount      int64  `json:"amount"`
}

// job is one delivery being processed in its own transaction.
type job struct {
	d  amqp.Delivery
	m  message
	tx *sql.Tx
}

// Main is `lab worker batch-consumer`.
func Main(ctx context.Context, p *worker.Parent, args []string) error {
	o, err := ParseArgs(args)
	if err != nil {
		return err
	}
	w, err := services.OpenWorker(ctx, o.DB, services.PlainChannel)
	if err != nil {
		return err
	}
	defer w.Close()
	db, ch := w.DB, w.Ch
	db.SetMaxOpenConns(o.Count + 1)
	queue := w.Names.Name(o.Queue)
	if err := ch.Qos(o.Count, 0, false); err != nil {
		return fmt.Errorf("basic.qos prefetch %d: %w", o.Count, err)
	}
	ds, err := ch.ConsumeWithContext(ctx, queue, "lab-batch", false, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("basic.consume on %s: %w (the lesson declares the queue)", queue, err)
	}
	p.Logf("consuming %s with prefetch %d, ack %s", queue, o.Count, map[bool]string{true: "multiple", false: "single"}[o.Multiple])
	var jobs []*job
	for len(jobs) < o.Count {
		select {
		case d, ok := <-ds:
			if !ok {
				return fmt.Errorf("the delivery stream of %s ended", queue)
			}
			var m message
			if err := json.Unmarshal(d.Body, &m); err != nil {
				return fmt.Errorf("delivery tag=%d: body is not the lab's event JSON: %v", d.DeliveryTag, err)
			}
			p.Logf("delivery tag=%d redelivered=%t %s (%s)", d.DeliveryTag, d.Redelivered, m.EventID, m.BusinessKey)
			jobs = append(jobs, &job{d: d, m: m})
		case <-ctx.Done():
			return nil
		}
	}
	if err := p.Reach(ctx, "received"); err != nil {
		return err
	}
	// Every delivery gets its transaction at once: a pool of workers.
	for _, j := range jobs {
		if j.tx, err = db.BeginTx(ctx, nil); err != nil {
			return fmt.Errorf("START TRANSACTION: %w", err)
		}
		if _, err := j.tx.ExecContext(ctx, stmtMarkInsert, o.Consumer, j.m.BusinessKey, j.m.EventID, j.m.UserID, j.m.Amount); err != nil {
			return fmt.Errorf("tag=%d: INSERT INTO consumed_operation: %w", j.d.DeliveryTag, err)
		}
		res, err := j.tx.ExecContext(ctx, stmtPointsUpdate, j.m.Amount, j.m.UserID)
		if err != nil {
			return fmt.Errorf("tag=%d: UPDATE points_account: %w", j.d.DeliveryTag, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("tag=%d: no points account for user %d (UPDATE matched 0 rows)", j.d.DeliveryTag, j.m.UserID)
		}
		p.Logf("tag=%d: transaction open: mark and +%d points written, not committed", j.d.DeliveryTag, j.m.Amount)
	}
	if err := p.Reach(ctx, "processing"); err != nil {
		return err
	}
	last := jobs[len(jobs)-1]
	if err := last.tx.Commit(); err != nil {
		return fmt.Errorf("tag=%d: COMMIT: %w", last.d.DeliveryTag, err)
	}
	p.Logf("tag=%d finished first: COMMIT", last.d.DeliveryTag)
	if err := p.Reach(ctx, "after-commit"); err != nil {
		return err
	}
	if err := ch.Ack(last.d.DeliveryTag, o.Multiple); err != nil {
		return fmt.Errorf("basic.ack tag=%d: %w", last.d.DeliveryTag, err)
	}
	// A synchronous round trip: the broker has processed the ack before
	// the program goes on (or is killed).
	if err := ch.Qos(o.Count, 0, false); err != nil {
		return fmt.Errorf("after basic.ack tag=%d: the broker closed the channel: %w", last.d.DeliveryTag, err)
	}
	if o.Multiple {
		p.Logf("basic.ack tag=%d multiple=true: the broker settles tags 1..%d, though %s still processing", last.d.DeliveryTag, last.d.DeliveryTag, stillOpen(jobs[:len(jobs)-1]))
	} else {
		p.Logf("basic.ack tag=%d multiple=false: only this delivery is settled", last.d.DeliveryTag)
	}
	if err := p.Reach(ctx, "after-ack"); err != nil {
		return err
	}
	for _, j := range jobs[:len(jobs)-1] {
		if err := j.tx.Commit(); err != nil {
			return fmt.Errorf("tag=%d: COMMIT: %w", j.d.DeliveryTag, err)
		}
		p.Logf("tag=%d: COMMIT", j.d.DeliveryTag)
		if !o.Multiple {
			if err := ch.Ack(j.d.DeliveryTag, false); err != nil {
				return fmt.Errorf("basic.ack tag=%d: %w", j.d.DeliveryTag, err)
			}
			p.Logf("basic.ack tag=%d multiple=false", j.d.DeliveryTag)
		}
	}
	if err := ch.Qos(o.Count, 0, false); err != nil {
		return fmt.Errorf("the broker closed the channel: %w", err)
	}
	return p.Reach(ctx, "done")
}

func stillOpen(js []*job) string {
	s := ""
	for i, j := range js {
		if i > 0 {
			s += " and "
		}
		s += fmt.Sprintf("tag %d", j.d.DeliveryTag)
	}
	if len(js) == 1 {
		return s + " is"
	}
	return s + " are"
}

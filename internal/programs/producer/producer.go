// Package producer is the lab's publisher program, `lab worker producer`: it
// commits a business row in blog_outbox_lab and then publishes the event to
// RabbitMQ, waiting for the publisher confirm. Its named points sit at the
// hand-offs, so a lesson can SIGKILL it between the commit and the publish —
// the window no broker setting can close.
//
//	lab worker producer [--name N] [--pause-at p1,p2]
//	    --order 42 --event event-001 [--user 7] [--amount 10] [--status PAID]
//	    [--exchange orders --key order.paid | --queue orders]
//	    [--outbox] [--no-confirm] [--timeout 5s]
//	lab worker producer --resend [--exchange ... --key ... | --queue ...]
//
// With --outbox the order and an outbox_event row (the article's statement)
// commit in one transaction, and the row is marked SENT once the broker
// confirmed the publish. --resend publishes the outbox rows still NEW — what
// a relay does, reduced to its core; the outbox lessons show a real relay
// with claims and leases.
//
// Points, in order: after-commit, before-publish, after-publish,
// after-confirm (and after-mark with --outbox); --place (lab chaos) reaches
// before-commit and after-commit for each order.
package producer

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Points are the pause points `lab worker producer` announces, in the order a
// message meets them; a lesson's spawn pause-at= and wait until= are
// checked against them when it loads.
var Points = []string{"before-commit", "after-commit", "before-publish", "after-publish", "after-confirm", "after-mark"}

// Message is the event body every consumer of the lab reads.
type Message struct {
	EventID     string `json:"event_id"`
	BusinessKey string `json:"business_key"`
	UserID      int64  `json:"user_id"`
	Amount      int64  `json:"amount"`
}

// Options are the producer's flags.
type Options struct {
	Order    int64
	Status   string
	Msg      Message
	Exchange string // article name; namespaced when sent
	Key      string
	Queue    string // publish to this queue through the default exchange
	Outbox   bool
	Resend   bool
	Confirm  bool
	Timeout  time.Duration
	DB       string
	// Place mode (lab chaos): orders From..From+Place-1 at Rate per second.
	Place int
	From  int64
	Rate  float64
	// With Place: every ResendEvery-th order's event is sent again under a
	// new event id (an upstream retry), and every ConflictEvery-th order's
	// again under a new id with ConflictAmount (a conflicting repeat).
	ResendEvery, ConflictEvery int
	ConflictAmount             int64
	// OrderEvents places each order as two transactions, each with its
	// event: CREATED (version 1), then PAID (version 2), for a consumer
	// that keeps each order's newest state (the order challenge).
	OrderEvents bool
}

// ParseArgs reads the flags the worker layer left.
func ParseArgs(args []string) (Options, error) {
	o := Options{}
	fs := flag.NewFlagSet("lab worker producer", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Int64Var(&o.Order, "order", 0, "purchase_order id to commit")
	fs.StringVar(&o.Status, "status", "PAID", "purchase_order status")
	fs.StringVar(&o.Msg.EventID, "event", "", "event id (the message id)")
	fs.Int64Var(&o.Msg.UserID, "user", 7, "user the points go to")
	fs.Int64Var(&o.Msg.Amount, "amount", 10, "points")
	fs.StringVar(&o.Exchange, "exchange", "", "exchange (article name)")
	fs.StringVar(&o.Key, "key", "", "routing key")
	fs.StringVar(&o.Queue, "queue", "", "queue, through the default exchange (article name)")
	fs.BoolVar(&o.Outbox, "outbox", false, "write an outbox_event row in the order's transaction")
	fs.BoolVar(&o.Resend, "resend", false, "publish the outbox rows still NEW, then mark them SENT")
	noConfirm := fs.Bool("no-confirm", false, "publish without confirm mode")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Second, "how long to wait for the confirm")
	fs.StringVar(&o.DB, "db", services.OutboxDB, "article database (namespace added)")
	fs.IntVar(&o.Place, "place", 0, "place N orders through the outbox at --rate and publish nothing: the relays do (lab chaos)")
	fs.Int64Var(&o.From, "from", 1, "with --place: the first order id")
	fs.Float64Var(&o.Rate, "rate", 50, "with --place: orders per second")
	fs.IntVar(&o.ResendEvery, "resend-every", 0, "with --place: every Nth order's event is written again under a new event id, same business key and amount")
	fs.IntVar(&o.ConflictEvery, "conflict-every", 0, "with --place: every Nth order's event is written again under a new event id with --conflict-amount")
	fs.Int64Var(&o.ConflictAmount, "conflict-amount", 5, "with --conflict-every: the repeat's amount (the order's own event carries 1)")
	fs.BoolVar(&o.OrderEvents, "order-events", false, "with --place: each order as two transactions and two events, CREATED (version 1) then PAID (version 2)")
	if err := fs.Parse(args); err != nil {
		return o, worker.FlagError("lab worker producer", fs, err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("lab worker producer: unexpected argument %q", fs.Arg(0))
	}
	o.Confirm = !*noConfirm
	if o.Place != 0 {
		switch {
		case o.ResendEvery < 0 || o.ConflictEvery < 0:
			return o, fmt.Errorf("lab worker producer: --resend-every and --conflict-every take N ≥ 1 (0 for none)")
		case o.Place < 0 || o.From < 1 || o.Rate <= 0:
			return o, fmt.Errorf("lab worker producer: --place N needs N ≥ 1, --from ≥ 1 and --rate > 0")
		case o.Resend || o.Order != 0 || o.Exchange != "" || o.Queue != "":
			return o, fmt.Errorf("lab worker producer: --place commits orders and outbox rows only; it takes no --order, --resend, --exchange or --queue")
		}
		return o, nil
	}
	switch {
	case o.Exchange == "" && o.Queue == "":
		return o, fmt.Errorf("lab worker producer: give --exchange NAME --key KEY, or --queue NAME")
	case o.Exchange != "" && o.Queue != "":
		return o, fmt.Errorf("lab worker producer: give --exchange or --queue, not both")
	case o.Resend && o.Order != 0:
		return o, fmt.Errorf("lab worker producer: --resend publishes what the outbox holds; it takes no --order")
	case !o.Resend && (o.Order == 0 || o.Msg.EventID == ""):
		return o, fmt.Errorf("lab worker producer: give --order N and --event ID (or --resend)")
	}
	o.Msg.BusinessKey = fmt.Sprintf("order:%d:paid", o.Order)
	return o, nil
}

// Producer holds the connections of one run of the program.
type Producer struct {
	O     Options
	DB    *sql.DB
	Ch    *amqp.Channel
	Names services.Names
	P     *worker.Parent

	returns chan amqp.Return
}

// Main is `lab worker producer`.
func Main(ctx context.Context, p *worker.Parent, args []string) error {
	o, err := ParseArgs(args)
	if err != nil {
		return err
	}
	ch := services.PlainChannel
	switch {
	case o.Place > 0:
		ch = services.NoChannel // places orders only
	case o.Confirm:
		ch = services.ConfirmChannel
	}
	w, err := services.OpenWorker(ctx, o.DB, ch)
	if err != nil {
		return err
	}
	defer w.Close()
	if o.Place > 0 {
		return (&Producer{O: o, DB: w.DB, Names: w.Names, P: p}).place(ctx)
	}
	pr := &Producer{O: o, DB: w.DB, Ch: w.Ch, Names: w.Names, P: p}
	pr.returns = w.Ch.NotifyReturn(make(chan amqp.Return, 16))
	if o.Resend {
		return pr.resend(ctx)
	}
	return pr.orderThenPublish(ctx)
}

// orderThenPublish is the producer most programs are: commit, then publish.
func (pr *Producer) orderThenPublish(ctx context.Context) error {
	o := pr.O
	body, _ := json.Marshal(o.Msg)
	tx, err := pr.DB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("START TRANSACTION: %w", err)
	}
	if _, err := tx.ExecContext(ctx, stmtOrderInsert, o.Order, o.Status); err != nil {
		tx.Rollback()
		return fmt.Errorf("INSERT INTO purchase_order VALUES(%d,'%s'): %w", o.Order, o.Status, err)
	}
	pr.P.Logf("START TRANSACTION; INSERT INTO purchase_order VALUES(%d,'%s')", o.Order, o.Status)
	if o.Outbox {
		// The article's outbox statement; the payload is the event body.
		_, err := tx.ExecContext(ctx, stmtEventInsert, o.Msg.EventID, o.Order, "OrderPaid",
			payload(paidPayload{EventID: o.Msg.EventID, BusinessKey: o.Msg.BusinessKey, UserID: o.Msg.UserID, Amount: o.Msg.Amount}))
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("INSERT INTO outbox_event (%s): %w", o.Msg.EventID, err)
		}
		pr.P.Logf("INSERT INTO outbox_event (event_id '%s', status 'NEW') in the same transaction", o.Msg.EventID)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("COMMIT: %w", err)
	}
	pr.P.Logf("COMMIT: order %d is %s in %s", o.Order, o.Status, pr.Names.Name(o.DB))
	if err := pr.P.Reach(ctx, "after-commit"); err != nil {
		return err
	}
	return pr.publish(ctx, o.Msg.EventID, body)
}

// resend publishes every outbox row still NEW, oldest first.
func (pr *Producer) resend(ctx context.Context) error {
	// MySQL returns its binary JSON re-serialised (keys reordered, a space
	// after each colon); MariaDB's JSON is LONGTEXT and comes back as
	// stored. Either is the same JSON body for the consumer.
	rows, err := pr.DB.QueryContext(ctx, stmtNewEvents)
	if err != nil {
		return fmt.Errorf("SELECT the NEW outbox rows: %w", err)
	}
	type pending struct{ id, payload string }
	var todo []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.id, &p.payload); err != nil {
			rows.Close()
			return err
		}
		todo = append(todo, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	pr.P.Logf("SELECT event_id, payload FROM outbox_event WHERE status='NEW': %d row(s)", len(todo))
	for _, p := range todo {
		if err := pr.publish(ctx, p.id, []byte(p.payload)); err != nil {
			return err
		}
	}
	return nil
}

// publish sends one event and, in confirm mode, waits for the broker's
// answer before saying it is done.
func (pr *Producer) publish(ctx context.Context, id string, body []byte) error {
	o := pr.O
	if err := pr.P.Reach(ctx, "before-publish"); err != nil {
		return err
	}
	exchange, key := pr.Names.Name(o.Exchange), o.Key
	if o.Queue != "" {
		exchange, key = "", pr.Names.Name(o.Queue)
	}
	msg := amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, MessageId: id, Timestamp: time.Now(), Body: body}
	dc, err := pr.Ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, true, false, msg)
	if err != nil {
		return fmt.Errorf("basic.publish %s: %w", id, err)
	}
	pr.P.Logf("basic.publish %s to exchange %q key %q (persistent, mandatory)", id, exchange, key)
	if err := pr.P.Reach(ctx, "after-publish"); err != nil {
		return err
	}
	if dc == nil {
		pr.P.Logf("no confirm mode: the producer cannot know whether the broker has %s", id)
		return nil
	}
	wc, cancel := context.WithTimeout(ctx, o.Timeout)
	ack, err := dc.WaitContext(wc)
	cancel()
	switch {
	case err != nil:
		return fmt.Errorf("no confirm for %s within %s: unknown whether the broker stored it; resend it under the same id", id, o.Timeout)
	case !ack:
		return fmt.Errorf("basic.nack (or the channel closed) for %s: resend it under the same id", id)
	}
	select {
	case ret := <-pr.returns:
		// A return comes before the confirm: the broker took the message
		// and found no queue for it.
		return fmt.Errorf("basic.return %d %s for %s: confirmed but routed to no queue", ret.ReplyCode, ret.ReplyText, id)
	default:
	}
	pr.P.Logf("basic.ack: the broker confirmed %s", id)
	if err := pr.P.Reach(ctx, "after-confirm"); err != nil {
		return err
	}
	if o.Outbox || o.Resend {
		res, err := pr.DB.ExecContext(ctx, stmtMarkSent, id)
		if err != nil {
			return fmt.Errorf("mark %s SENT: %w", id, err)
		}
		n, _ := res.RowsAffected()
		pr.P.Logf("UPDATE outbox_event SET status='SENT' WHERE event_id='%s' AND status='NEW': %d row(s)", id, n)
		if err := pr.P.Reach(ctx, "after-mark"); err != nil {
			return err
		}
	}
	return nil
}

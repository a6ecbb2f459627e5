package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/programs/relay"
	"github.com/rmlab/lab/internal/services"
)

// QueueName is the article name of the queue the relays publish to.
const QueueName = "orders"

// prepare recreates the run's two databases (only ones the lab created),
// gives every order an account of its own with 0 points, and recreates the
// queue (a durable classic queue: it keeps confirmed persistent messages
// over a broker restart and, unlike a quorum queue on 4.x, has no delivery
// limit that could drop a message its consumers kept dying with).
func prepare(ctx context.Context, server *sql.DB, amqpURL string, names services.Names, orders int) error {
	if _, err := relay.CreateDatabase(ctx, server, names); err != nil {
		return fmt.Errorf("create the outbox database: %w", err)
	}
	idem, err := services.Recreate(ctx, server, names, services.IdempotencyDB)
	if err != nil {
		return err
	}
	if err := fill(ctx, server, idem+".points_account", orders, "(%d,0)"); err != nil {
		return err
	}
	return declareQueue(ctx, amqpURL, names.Name(QueueName))
}

func declareQueue(ctx context.Context, amqpURL, queue string) error {
	cl := broker.NewClient(amqpURL)
	defer cl.Close()
	if _, err := cl.Remove(ctx, "queue", queue); err != nil {
		return err
	}
	return cl.Probe(ctx, func(ch *amqp.Channel) error {
		return broker.DeclareQueue(ch, broker.Queue{Name: queue, Durable: true})
	})
}

// queueDepth is the ready messages of the queue, or -1 when the broker
// does not answer.
func queueDepth(ctx context.Context, amqpURL, queue string) int {
	c, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cl := broker.NewClient(amqpURL)
	defer cl.Close()
	n := -1
	err := cl.Probe(c, func(ch *amqp.Channel) error {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		n = q.Messages
		return err
	})
	if err != nil {
		return -1
	}
	return n
}

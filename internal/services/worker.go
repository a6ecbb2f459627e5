package services

import (
	"context"
	"database/sql"
	"fmt"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Channel is what a worker process needs of the broker.
type Channel int

const (
	NoChannel      Channel = iota // the broker is not this worker's
	PlainChannel                  // a channel
	ConfirmChannel                // a channel in confirm mode (confirm.select)
)

// Worker is a worker process's start-up, the same for every program: its
// services as the lab passed them in the environment (Config.FromEnv), its
// namespace, the database db names (article name; "" for none) and a
// channel. Close closes what was opened.
type Worker struct {
	Config Config
	Names  Names
	DB     *sql.DB          // nil without a database
	Conn   *amqp.Connection // nil without a channel
	Ch     *amqp.Channel
}

// OpenWorker opens what a worker process needs; on an error nothing stays
// open, and the error says which service and how to fix it.
func OpenWorker(ctx context.Context, db string, ch Channel) (*Worker, error) {
	w := &Worker{Config: Config{}.FromEnv()}
	w.Names = Names{NS: w.Config.Namespace}
	var err error
	if db != "" {
		if w.DB, err = OpenDB(ctx, w.Config, db); err != nil {
			return nil, err
		}
	}
	if ch == NoChannel {
		return w, nil
	}
	if w.Conn, err = OpenAMQP(ctx, w.Config.AMQP); err != nil {
		w.Close()
		return nil, err
	}
	if w.Ch, err = w.Conn.Channel(); err != nil {
		w.Close()
		return nil, fmt.Errorf("open an AMQP channel: %w", err)
	}
	if ch == ConfirmChannel {
		if err := w.Ch.Confirm(false); err != nil {
			w.Close()
			return nil, fmt.Errorf("confirm.select: %w", err)
		}
	}
	return w, nil
}

// Close closes the connection and the database.
func (w *Worker) Close() {
	if w.Conn != nil {
		w.Conn.Close()
	}
	if w.DB != nil {
		w.DB.Close()
	}
}

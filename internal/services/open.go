package services

import (
	amqp "github.com/rabbitmq/amqp091-go"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/plain"
	"github.com/rmlab/lab/internal/secret"
)

// DialTimeout is how long a connection to a server may take to open. A
// server too busy to accept (its accept queue full: MariaDB's back_log is
// 80) holds a new connection back until it accepts again, and the dial
// completes within a second of that. A dial cut at 3 s failed a worker
// under CI's load ("dial tcp 127.0.0.1:3306: i/o timeout" at +3.47 s);
// this one waits out a stall of seven seconds. A refused port still fails
// at once.
const DialTimeout = 8 * time.Second

// OpenDB is how a worker process (consumer, relay, producer, executor)
// connects to one of the article's databases: the address from cfg, the
// name namespaced.
func OpenDB(ctx context.Context, cfg Config, article string) (*sql.DB, error) {
	return Open(ctx, cfg.MySQL, Names{NS: cfg.Namespace}.Name(article))
}

// Open opens a pool on database name ("" for none) of the server dsn names,
// checked with a ping so a missing database or server is a clear message
// instead of the first query's failure.
func Open(ctx context.Context, dsn, name string) (*sql.DB, error) {
	dc, err := gomysql.ParseDSN(dsn)
	if err != nil {
		return nil, &lab.Error{What: "the MySQL DSN is malformed", Where: secret.DSN(dsn), Err: err,
			Fix: "write it as user:password@tcp(host:3306)/ in LAB_MYSQL_DSN or --mysql"}
	}
	dc.DBName = name
	dc.ParseTime = true
	// One round trip per statement instead of prepare/execute/close: the
	// workers' statements are short and many (the relay's above all).
	dc.InterpolateParams = true
	if dc.Timeout == 0 {
		dc.Timeout = DialTimeout
	}
	db, err := sql.Open("mysql", dc.FormatDSN())
	if err != nil {
		return nil, err
	}
	pc, cancel := context.WithTimeout(ctx, dc.Timeout+2*time.Second)
	defer cancel()
	if err := db.PingContext(pc); err != nil {
		db.Close()
		var me *gomysql.MySQLError
		if errors.As(err, &me) && me.Number == ErBadDB {
			return nil, &lab.Error{What: fmt.Sprintf("database %s does not exist", name), Where: dc.Addr,
				Fix: "run the lesson's reset step first: it creates the database"}
		}
		what, fix := advice("MySQL/MariaDB", "--mysql or LAB_MYSQL_DSN", err, "start it, or point LAB_MYSQL_DSN / --mysql at a running server")
		return nil, &lab.Error{What: what, Where: secret.DSN(dsn), Err: err, Fix: fix}
	}
	return db, nil
}

// OpenAMQP dials RabbitMQ for a lab program (a worker, the bench) and says,
// when it cannot, where it tried (password redacted) and how to fix it: one
// message for every program.
func OpenAMQP(ctx context.Context, rawURL string) (*amqp.Connection, error) {
	conn, err := DialAMQP(ctx, rawURL)
	if err != nil {
		return nil, amqpUnreachable(rawURL, err)
	}
	return conn, nil
}

func amqpUnreachable(rawURL string, err error) *lab.Error {
	what, fix := advice("RabbitMQ", "--amqp or LAB_AMQP_URL", err,
		"start it (rabbitmq-server -detached), pass another broker with --amqp URL or LAB_AMQP_URL, or run `docker compose up -d mysql rabbitmq redis`")
	return &lab.Error{What: what, Where: secret.URL(rawURL), Err: err, Fix: fix}
}

// Code is a MySQL error's number (1213, 1062, …), 0 for any other error.
func Code(err error) uint16 {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// Retryable is a deadlock (1213) or a lock wait timeout (1205): the
// statement may succeed if tried again.
func Retryable(err error) bool {
	c := Code(err)
	return c == ErLockDeadlock || c == ErLockWaitTimeout
}

// QueueExists checks with a passive declare that the lesson declared queue
// (its sent name) before a program uses it; who says which program, for a
// message that names the broker and the fix. A program never creates one:
// the queue's type and arguments are the lesson's.
func QueueExists(ch *amqp.Channel, queue, amqpURL, who string) error {
	_, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	var ae *amqp.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.Code == amqp.NotFound:
		return QueueNotFound(ae, queue, secret.URL(amqpURL), who)
	}
	return fmt.Errorf("check queue %s: %w", queue, err)
}

// QueueNotFound words a 404 on a passive declare: RabbitMQ gives the same
// code for a queue that is not there and for one whose process is down
// (its node killed, or its recovery failed), which a lesson's earlier
// steps cannot fix. The broker's reason is shown printable only.
func QueueNotFound(ae *amqp.Error, queue, where, who string) error {
	if strings.Contains(ae.Reason, "down or inaccessible") {
		return fmt.Errorf("queue %s exists at %s but is unavailable (the broker says: %s); it serves again once its node is back: start the %s again then",
			queue, where, plain.Line(ae.Reason, 200), who)
	}
	return fmt.Errorf("queue %s does not exist at %s: the lesson declares its queues (run its earlier steps); the %s never creates one",
		queue, where, who)
}

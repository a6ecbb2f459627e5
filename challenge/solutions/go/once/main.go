// A reference solution of the "once" challenge: the mark and the effect in
// one transaction, keyed by the message id, acked after the commit. It
// passes "once" and fails "business-key" on purpose: a re-send under a new
// message id looks new to it (see business-key/).
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"log"
	"os"

	"github.com/go-sql-driver/mysql"
	amqp "github.com/rabbitmq/amqp091-go"
)

type event struct {
	BusinessKey string `json:"business_key"`
	UserID      int64  `json:"user_id"`
	Amount      int64  `json:"amount"`
}

func main() {
	log.SetFlags(0)
	log.SetPrefix(os.Getenv("LAB_NAME") + ": ")
	db, err := sql.Open("mysql", os.Getenv("LAB_MYSQL_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	conn, err := amqp.Dial(os.Getenv("LAB_AMQP_URL"))
	if err != nil {
		log.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}
	ch.Qos(10, 0, false)
	deliveries, err := ch.Consume(os.Getenv("LAB_QUEUE"), os.Getenv("LAB_NAME"), false, false, false, false, nil)
	if err != nil {
		log.Fatal(err)
	}
	name := os.Getenv("LAB_CONSUMER_NAME")
	for d := range deliveries {
		var e event
		if err := json.Unmarshal(d.Body, &e); err != nil {
			log.Fatalf("message %s: %v", d.MessageId, err)
		}
		if err := apply(db, name, d.MessageId, e); err != nil {
			log.Fatalf("apply %s: %v", d.MessageId, err) // not acked: it comes again
		}
		if err := d.Ack(false); err != nil {
			log.Fatalf("ack %s: %v", d.MessageId, err)
		}
	}
	log.Fatal("the broker closed the channel")
}

// apply marks the message and adds the points in one transaction; a mark
// already there (1062) means it was applied before, and nothing changes.
func apply(db *sql.DB, name, id string, e event) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.Exec("INSERT INTO consumed_operation (consumer_name, business_key, event_id, user_id, amount) VALUES (?, ?, ?, ?, ?)",
		name, id, id, e.UserID, e.Amount)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1062 {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := tx.Exec("UPDATE points_account SET points = points + ? WHERE user_id = ?", e.Amount, e.UserID); err != nil {
		return err
	}
	return tx.Commit()
}

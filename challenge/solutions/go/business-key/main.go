// A reference solution of the "business-key" challenge: the mark and the
// effect in one transaction, keyed by the business key, acked after the
// commit. Any repeat of a key counts as done (the article's blind key), so
// it fails "conflict" on purpose: a repeat with another amount is swallowed
// silently (see conflict/).
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

// apply marks the operation and adds the points in one transaction; a mark
// of its business key already there (1062) means it was applied before.
func apply(db *sql.DB, name, id string, e event) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	_, err = tx.Exec("INSERT INTO consumed_operation (consumer_name, business_key, event_id, user_id, amount) VALUES (?, ?, ?, ?, ?)",
		name, e.BusinessKey, id, e.UserID, e.Amount)
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

// A reference solution of the "conflict" challenge (and of "once" and
// "business-key"): the mark and the effect in one transaction, keyed by the
// business key, acked after the commit; a repeat of a key is compared with
// the stored operation, and one that disagrees is recorded in
// consumed_conflict and applies nothing.
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

// apply marks the operation and adds the points in one transaction. A mark
// of its business key already there (1062) means a repeat: the same user
// and amount is a duplicate; anything else is a conflict, recorded.
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
		return repeat(tx, name, id, e)
	}
	if err != nil {
		return err
	}
	if _, err := tx.Exec("UPDATE points_account SET points = points + ? WHERE user_id = ?", e.Amount, e.UserID); err != nil {
		return err
	}
	return tx.Commit()
}

// repeat compares a repeat with the stored operation, in the same
// transaction, and records a conflict when they disagree.
func repeat(tx *sql.Tx, name, id string, e event) error {
	var storedID string
	var storedUser, storedAmount int64
	err := tx.QueryRow("SELECT event_id, user_id, amount FROM consumed_operation WHERE consumer_name = ? AND business_key = ?",
		name, e.BusinessKey).Scan(&storedID, &storedUser, &storedAmount)
	if err != nil {
		return err
	}
	if storedUser == e.UserID && storedAmount == e.Amount {
		return nil // a plain duplicate
	}
	_, err = tx.Exec("INSERT INTO consumed_conflict (consumer_name, business_key, event_id, user_id, amount, stored_event_id, stored_user_id, stored_amount) "+
		"VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE seen = seen + 1",
		name, e.BusinessKey, id, e.UserID, e.Amount, storedID, storedUser, storedAmount)
	if err != nil {
		return err
	}
	log.Printf("conflict on %s: %s carries user %d amount %d, %s had user %d amount %d", e.BusinessKey, id, e.UserID, e.Amount, storedID, storedUser, storedAmount)
	return tx.Commit()
}

// The relay challenge's starter: it meets the contract (CONTRACT.md) and
// runs, and it is wrong in the ways the challenge is about. Change the
// places marked CHANGE until `lab challenge run relay` passes.
package main

import (
	"context"
	"database/sql"
	"log"
	"os"
	"time"

	_ "github.com/go-sql-driver/mysql"
	amqp "github.com/rabbitmq/amqp091-go"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix(os.Getenv("LAB_NAME") + ": ")
	db, err := sql.Open("mysql", os.Getenv("LAB_MYSQL_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	conn, err := amqp.Dial(os.Getenv("LAB_AMQP_URL"))
	if err != nil {
		log.Fatal(err) // the lab starts the program again
	}
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}
	exchange, key := os.Getenv("LAB_EXCHANGE"), os.Getenv("LAB_ROUTING_KEY")
	for {
		rows, err := db.Query("SELECT event_id, payload FROM outbox_event WHERE status = 'NEW' ORDER BY created_at LIMIT 10")
		if err != nil {
			log.Fatal(err)
		}
		type ev struct{ id, payload string }
		var batch []ev
		for rows.Next() {
			var e ev
			if err := rows.Scan(&e.id, &e.payload); err != nil {
				log.Fatal(err)
			}
			batch = append(batch, e)
		}
		rows.Close()
		if len(batch) == 0 {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for _, e := range batch {
			// CHANGE: a claim with no expiry. A relay killed right after
			// this leaves the event SENDING for ever.
			if _, err := db.Exec("UPDATE outbox_event SET status = 'SENDING' WHERE event_id = ?", e.id); err != nil {
				log.Fatal(err)
			}
			// CHANGE: no publisher confirm. Publish returns once the bytes
			// are written; the broker may never get them.
			err := ch.PublishWithContext(context.Background(), exchange, key, false, false, amqp.Publishing{
				MessageId: e.id, ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: []byte(e.payload)})
			if err != nil {
				log.Fatalf("publish %s: %v", e.id, err)
			}
			if _, err := db.Exec("UPDATE outbox_event SET status = 'SENT' WHERE event_id = ?", e.id); err != nil {
				log.Fatal(err)
			}
		}
	}
}

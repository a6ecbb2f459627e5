// The order challenge's starter: it meets the contract (CONTRACT.md) and
// runs, and it is wrong in the way the challenge is about. Change the
// place marked CHANGE until `lab challenge run order` passes.
package main

import (
	"database/sql"
	"encoding/json"
	"log"
	"os"

	_ "github.com/go-sql-driver/mysql"
	amqp "github.com/rabbitmq/amqp091-go"
)

// event is a message's body: an order's new state and its version.
type event struct {
	OrderID int64  `json:"orderId"`
	Version int64  `json:"version"`
	Status  string `json:"status"`
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
	for d := range deliveries {
		var e event
		if err := json.Unmarshal(d.Body, &e); err != nil {
			log.Fatalf("message %s: %v", d.MessageId, err)
		}
		// CHANGE: this writes whatever state comes, so an older event that
		// comes late overwrites a newer one.
		if _, err := db.Exec("UPDATE order_view SET status = ?, version = ? WHERE order_id = ?", e.Status, e.Version, e.OrderID); err != nil {
			log.Fatalf("apply %s: %v", d.MessageId, err)
		}
		if err := d.Ack(false); err != nil {
			log.Fatalf("ack %s: %v", d.MessageId, err)
		}
	}
	log.Fatal("the broker closed the channel")
}

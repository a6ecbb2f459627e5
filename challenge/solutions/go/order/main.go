// A reference solution of the "order" challenge: an event is applied only
// over an older version, decided by the database in one statement, so a
// late, redelivered or republished older event changes nothing.
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
		// 0 rows: the view holds this version or a newer one already.
		if _, err := db.Exec("UPDATE order_view SET status = ?, version = ? WHERE order_id = ? AND version < ?",
			e.Status, e.Version, e.OrderID, e.Version); err != nil {
			log.Fatalf("apply %s: %v", d.MessageId, err)
		}
		if err := d.Ack(false); err != nil {
			log.Fatalf("ack %s: %v", d.MessageId, err)
		}
	}
	log.Fatal("the broker closed the channel")
}

// The consumer challenges' starter: it meets the contract (CONTRACT.md) and
// runs, and it is wrong in the way the challenges are about. Change the
// places marked CHANGE until `lab challenge run` passes.
package main

import (
	"database/sql"
	"encoding/json"
	"log"
	"os"

	_ "github.com/go-sql-driver/mysql"
	amqp "github.com/rabbitmq/amqp091-go"
)

// event is a message's body.
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
		log.Fatal(err) // the lab starts the program again
	}
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}
	if err := ch.Qos(10, 0, false); err != nil {
		log.Fatal(err)
	}
	deliveries, err := ch.Consume(os.Getenv("LAB_QUEUE"), os.Getenv("LAB_NAME"), false, false, false, false, nil)
	if err != nil {
		log.Fatal(err)
	}
	for d := range deliveries {
		var e event
		if err := json.Unmarshal(d.Body, &e); err != nil {
			log.Fatalf("message %s: %v", d.MessageId, err)
		}
		// CHANGE: this applies every delivery it gets. A message the broker
		// delivers again (your ack never reached it) is applied again.
		if _, err := db.Exec("UPDATE points_account SET points = points + ? WHERE user_id = ?", e.Amount, e.UserID); err != nil {
			log.Fatalf("apply %s: %v", d.MessageId, err)
		}
		if err := d.Ack(false); err != nil {
			log.Fatalf("ack %s: %v", d.MessageId, err)
		}
	}
	log.Fatal("the broker closed the channel") // a cut connection: exit and be restarted
}

// The SMS challenge's starter: it meets the contract (CONTRACT.md) and
// runs, and it is wrong in the ways the challenge is about. Change the
// places marked CHANGE until `lab challenge run sms` passes.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

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
	client := &http.Client{Timeout: 2 * time.Second}
	for d := range deliveries {
		var e event
		if err := json.Unmarshal(d.Body, &e); err != nil {
			log.Fatalf("message %s: %v", d.MessageId, err)
		}
		body, _ := json.Marshal(map[string]any{"to": e.UserID, "text": fmt.Sprintf("Thank you: order %d is paid", e.UserID)})
		// CHANGE: no Idempotency-Key, so every attempt is a new SMS; and an
		// answer that never comes is taken as "not sent".
		for {
			resp, err := client.Post(os.Getenv("LAB_SMS_URL"), "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode < 300 {
					break
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := d.Ack(false); err != nil {
			log.Fatalf("ack %s: %v", d.MessageId, err)
		}
	}
	log.Fatal("the broker closed the channel")
}

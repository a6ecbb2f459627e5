// A reference solution of the "sms" challenge: every attempt for one order
// goes under one Idempotency-Key, the order's business key, and a timeout
// or an error is sent again under it until the provider answers; the ack
// comes after that answer.
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
		for {
			req, _ := http.NewRequest(http.MethodPost, os.Getenv("LAB_SMS_URL"), bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", "sms:"+e.BusinessKey)
			resp, err := client.Do(req)
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

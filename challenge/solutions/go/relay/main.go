// A reference solution of the "relay" challenge: claims with a lease
// (lease_token, locked_until) taken with SKIP LOCKED, so copies never wait
// on each other and an expired claim is taken over; every publish carries
// the event id as its message id and is confirmed by the broker before the
// event is marked SENT, and only under its own lease token.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"log"
	"os"
	"strconv"
	"strings"
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
		log.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		log.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		log.Fatal(err)
	}
	lease, _ := strconv.Atoi(os.Getenv("LAB_LEASE_SECONDS"))
	lease = max(lease, 1)
	r := relay{db: db, ch: ch, exchange: os.Getenv("LAB_EXCHANGE"), key: os.Getenv("LAB_ROUTING_KEY"), lease: lease}
	for {
		n, err := r.once()
		if err != nil {
			log.Fatal(err) // the claim expires and another relay (or this one, restarted) takes it
		}
		if n == 0 {
			time.Sleep(200 * time.Millisecond)
		}
	}
}

type relay struct {
	db            *sql.DB
	ch            *amqp.Channel
	exchange, key string
	lease         int
}

type event struct{ id, payload string }

// once claims up to 10 due events, publishes them and marks the confirmed
// ones SENT. It returns how many it claimed.
func (r relay) once() (int, error) {
	token := rand.Text()
	batch, err := r.claim(token)
	if err != nil || len(batch) == 0 {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.lease)*time.Second)
	defer cancel()
	confirms := make([]*amqp.DeferredConfirmation, len(batch))
	for i, e := range batch {
		confirms[i], err = r.ch.PublishWithDeferredConfirmWithContext(ctx, r.exchange, r.key, false, false, amqp.Publishing{
			MessageId: e.id, ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: []byte(e.payload)})
		if err != nil {
			return 0, err
		}
	}
	for i, e := range batch {
		ok, err := confirms[i].WaitContext(ctx)
		if err != nil || !ok {
			// No confirm (dropped, nacked, or the connection went): maybe
			// the broker has it, maybe not. Leave the claim to expire; the
			// event is published again, under the same message id.
			return len(batch), nil
		}
		if _, err := r.db.Exec("UPDATE outbox_event SET status = 'SENT', lease_token = NULL, locked_until = NULL "+
			"WHERE event_id = ? AND lease_token = ?", e.id, token); err != nil {
			return 0, err
		}
	}
	return len(batch), nil
}

// claim takes up to 10 events that are NEW and due, or SENDING under a
// lease that has run out, in one transaction.
func (r relay) claim(token string) ([]event, error) {
	tx, err := r.db.Begin()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	rows, err := tx.Query("SELECT event_id FROM outbox_event WHERE (status = 'NEW' AND available_at <= NOW(6)) " +
		"OR (status = 'SENDING' AND locked_until < NOW(6)) ORDER BY created_at LIMIT 10 FOR UPDATE SKIP LOCKED")
	if err != nil {
		return nil, err
	}
	var ids []any
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) == 0 {
		return nil, nil
	}
	in := "?" + strings.Repeat(",?", len(ids)-1)
	args := append([]any{token, r.lease}, ids...)
	if _, err := tx.Exec("UPDATE outbox_event SET status = 'SENDING', lease_token = ?, locked_until = NOW(6) + INTERVAL ? SECOND, "+
		"attempts = attempts + 1 WHERE event_id IN ("+in+")", args...); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	rows, err = r.db.Query("SELECT event_id, payload FROM outbox_event WHERE lease_token = ? ORDER BY created_at", token)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []event
	for rows.Next() {
		var e event
		if err := rows.Scan(&e.id, &e.payload); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

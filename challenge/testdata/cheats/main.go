// Programs that try to pass a challenge without doing its work, or do it
// wrong in ways only evidence shows: the grader must fail each of them,
// naming what it did (challenge/run_test.go). One binary, the cheat named
// by its first argument. They hold exactly what the contract gives a
// program, nothing more.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	amqp "github.com/rabbitmq/amqp091-go"
)

var name = os.Getenv("LAB_NAME")

func main() {
	log.SetFlags(0)
	log.SetPrefix(name + ": ")
	if len(os.Args) < 2 {
		log.Fatal("which cheat?")
	}
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
	switch os.Args[1] {
	case "bulk":
		bulk(db, ch, false)
	case "purge":
		bulk(db, ch, true)
	case "assign":
		consume(db, ch, assign)
	case "ack-before-commit":
		consume(db, ch, "")
	case "exit-on-its-own":
		exitOnItsOwn(db, ch)
	case "invent-conflicts":
		inventConflicts(db, ch)
	case "bulk-paid":
		bulkPaid(db, ch)
	case "sms-up-front":
		smsUpFront(ch)
	case "relay-nothing":
		relayNothing(db)
	case "relay-no-confirms":
		relayNoConfirms(db, ch)
	case "order-early-ack":
		orderEarlyAck(db, ch)
	case "conflict-early-ack":
		conflictEarlyAck(db, ch)
	case "root":
		rootCheat(db, ch)
	default:
		log.Fatalf("no cheat %q", os.Args[1])
	}
}

// rootCheat keeps no mark at all: it adds every delivery's points and acks
// after the commit, so a redelivery adds them twice. Beside it, a login
// beyond the one the run gave it — root with no password where the run's
// server is, on the machine's default server, or any DSN it reads in
// another process's environment or arguments — undoes every second
// application every 50 ms and deletes the audit rows that would show
// both, its own undo's included.
func rootCheat(db *sql.DB, ch *amqp.Channel) {
	admin := adminLogin()
	if admin != nil {
		log.Print("found a login that reads lab_applied: undoing the doubles")
		go undoDoubles(admin)
	} else {
		log.Print("no login beyond my own: consuming with no mark")
	}
	for d := range deliveries(ch, 10) {
		var e event
		json.Unmarshal(d.Body, &e)
		if _, err := db.Exec("UPDATE points_account SET points = points + ? WHERE user_id = ?", e.Amount, e.UserID); err != nil {
			log.Fatal(err)
		}
		if admin != nil {
			if _, err := admin.Exec("INSERT INTO cheat_applied (business_key, user_id, amount) VALUES (?, ?, ?)", e.BusinessKey, e.UserID, e.Amount); err != nil {
				log.Print(err)
			}
		}
		d.Ack(false)
	}
	log.Fatal("channel closed")
}

// adminLogin is the first login other than the run's that reaches the
// run's database and may write its audit, or nil.
func adminLogin() *sql.DB {
	mine, err := mysql.ParseDSN(os.Getenv("LAB_MYSQL_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	// Which server the run's login reaches (through the lab's proxy, so
	// not by its address).
	const which = "SELECT CONCAT(@@hostname, ':', @@port, ':', @@datadir)"
	own, _ := sql.Open("mysql", mine.FormatDSN())
	var server string
	if err := own.QueryRow(which).Scan(&server); err != nil {
		log.Fatal(err)
	}
	own.Close()
	var candidates []*mysql.Config
	for _, addr := range []string{mine.Addr, "127.0.0.1:3306"} {
		c := mine.Clone()
		c.User, c.Passwd, c.Addr = "root", "", addr
		candidates = append(candidates, c)
	}
	// Every DSN another process shows: the lab's, its workers'.
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		for _, f := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile("/proc/" + p.Name() + "/" + f)
			if err != nil {
				continue
			}
			for _, part := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == ' ' }) {
				v, ok := strings.CutPrefix(part, "LAB_MYSQL_DSN=")
				if !ok {
					v, ok = strings.CutPrefix(part, "--mysql=")
				}
				if c, err := mysql.ParseDSN(v); ok && err == nil && c.User != mine.User {
					c.DBName = mine.DBName
					candidates = append(candidates, c)
				}
			}
		}
	}
	for _, c := range candidates {
		c.Timeout = 2 * time.Second
		db, err := sql.Open("mysql", c.FormatDSN())
		if err != nil {
			continue
		}
		var at string
		if db.QueryRow(which).Scan(&at) != nil || at != server {
			db.Close()
			continue
		}
		if _, err := db.Exec("CREATE TABLE IF NOT EXISTS cheat_applied (seq BIGINT AUTO_INCREMENT PRIMARY KEY, business_key VARCHAR(128), user_id BIGINT, amount BIGINT, undone BOOL NOT NULL DEFAULT FALSE)"); err == nil {
			if _, err := db.Exec("DELETE FROM lab_applied WHERE 1=0"); err == nil {
				log.Printf("logged in as %s at %s", c.User, c.Addr)
				return db
			}
		}
		db.Close()
	}
	return nil
}

// undoDoubles takes back every application of a business key after its
// first, and deletes from the lab's audit the rows of the second and of
// the undo.
func undoDoubles(admin *sql.DB) {
	for {
		time.Sleep(50 * time.Millisecond)
		rows, err := admin.Query("SELECT c.seq, c.user_id, c.amount FROM cheat_applied c WHERE NOT c.undone AND EXISTS (SELECT 1 FROM cheat_applied f WHERE f.business_key = c.business_key AND f.seq < c.seq)")
		if err != nil {
			log.Print(err)
			continue
		}
		type double struct{ seq, user, amount int64 }
		var ds []double
		for rows.Next() {
			var d double
			rows.Scan(&d.seq, &d.user, &d.amount)
			ds = append(ds, d)
		}
		rows.Close()
		for _, d := range ds {
			tx, err := admin.Begin()
			if err != nil {
				continue
			}
			tx.Exec("UPDATE points_account SET points = points - ? WHERE user_id = ?", d.amount, d.user)
			// The undo's own row, and the latest application of that
			// amount to that account: the second.
			tx.Exec("DELETE FROM lab_applied WHERE user_id = ? AND delta = ? ORDER BY seq DESC LIMIT 1", d.user, -d.amount)
			tx.Exec("DELETE FROM lab_applied WHERE user_id = ? AND delta = ? ORDER BY seq DESC LIMIT 1", d.user, d.amount)
			tx.Exec("UPDATE cheat_applied SET undone = TRUE WHERE seq = ?", d.seq)
			tx.Commit()
		}
	}
}

// ackAll acks every delivery unread.
func ackAll(ch *amqp.Channel) {
	ds := deliveries(ch, 0)
	go func() {
		for d := range ds {
			d.Ack(false)
		}
		log.Fatal("channel closed")
	}()
}

// bulk acks everything unread and, every 0.2 s, gives every account one
// point more than it had at the start (purge: after purging the queue).
func bulk(db *sql.DB, ch *amqp.Channel, purge bool) {
	if purge {
		if _, err := ch.QueuePurge(os.Getenv("LAB_QUEUE"), false); err != nil {
			log.Fatal(err)
		}
	}
	ackAll(ch)
	start := map[int64]int64{}
	rows, err := db.Query("SELECT user_id, points FROM points_account")
	if err != nil {
		log.Fatal(err)
	}
	for rows.Next() {
		var u, p int64
		rows.Scan(&u, &p)
		start[u] = p
	}
	rows.Close()
	for {
		for u, p := range start {
			if _, err := db.Exec("UPDATE points_account SET points = ? WHERE user_id = ? AND points = ?", p+1, u, p); err != nil {
				log.Fatal(err)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type event struct {
	BusinessKey string `json:"business_key"`
	UserID      int64  `json:"user_id"`
	Amount      int64  `json:"amount"`
}

const assign = "UPDATE points_account SET points = ? WHERE user_id = ?"

// consume marks each message by its business key and applies it; with
// set, the account is set to the amount, not added to; without, the
// message is acked before the commit.
func consume(db *sql.DB, ch *amqp.Channel, set string) {
	ds := deliveries(ch, 10)
	for d := range ds {
		var e event
		json.Unmarshal(d.Body, &e)
		tx, err := db.Begin()
		if err != nil {
			log.Fatal(err)
		}
		err = mark(tx, d.MessageId, e)
		if errors.Is(err, errDuplicate) {
			tx.Rollback()
			d.Ack(false)
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		stmt, args := "UPDATE points_account SET points = points + ? WHERE user_id = ?", []any{e.Amount, e.UserID}
		if set != "" {
			stmt = set
		}
		if _, err := tx.Exec(stmt, args...); err != nil {
			log.Fatal(err)
		}
		if set == "" {
			d.Ack(false) // before the commit
		}
		if err := tx.Commit(); err != nil {
			log.Fatal(err)
		}
		if set != "" {
			d.Ack(false)
		}
	}
	log.Fatal("channel closed")
}

// exitOnItsOwn is a correct consumer that exits 0 after every 25
// messages: the lab starts it again, and no fault armed for one life may
// hit the next.
func exitOnItsOwn(db *sql.DB, ch *amqp.Channel) {
	ds := deliveries(ch, 5)
	n := 0
	for d := range ds {
		var e event
		json.Unmarshal(d.Body, &e)
		tx, err := db.Begin()
		if err != nil {
			log.Fatal(err)
		}
		err = mark(tx, d.MessageId, e)
		switch {
		case errors.Is(err, errDuplicate):
			tx.Rollback()
		case err != nil:
			log.Fatal(err)
		default:
			if _, err := tx.Exec("UPDATE points_account SET points = points + ? WHERE user_id = ?", e.Amount, e.UserID); err != nil {
				log.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				log.Fatal(err)
			}
		}
		if err := d.Ack(false); err != nil {
			log.Fatal(err)
		}
		if n++; n == 25 {
			log.Print("25 done: exiting on my own")
			os.Exit(0)
		}
	}
	log.Fatal("channel closed")
}

// inventConflicts applies honestly by business key, and records a
// conflict for every order up front.
func inventConflicts(db *sql.DB, ch *amqp.Channel) {
	rows, err := db.Query("SELECT user_id FROM points_account")
	if err != nil {
		log.Fatal(err)
	}
	var users []int64
	for rows.Next() {
		var u int64
		rows.Scan(&u)
		users = append(users, u)
	}
	rows.Close()
	for _, u := range users {
		db.Exec("INSERT IGNORE INTO consumed_conflict (consumer_name, business_key, event_id, user_id, amount, stored_event_id, stored_user_id, stored_amount) VALUES (?, ?, ?, ?, 5, ?, ?, 1)",
			os.Getenv("LAB_CONSUMER_NAME"), fmt.Sprintf("order:%d:paid", u), fmt.Sprintf("order-%d-paid-conflict", u), u, fmt.Sprintf("order-%d-paid", u), u)
	}
	consumeByKey(db, ch)
}

// consumeByKey is the business-key consumer, acked after the commit.
func consumeByKey(db *sql.DB, ch *amqp.Channel) {
	ds := deliveries(ch, 10)
	for d := range ds {
		var e event
		json.Unmarshal(d.Body, &e)
		tx, err := db.Begin()
		if err != nil {
			log.Fatal(err)
		}
		err = mark(tx, d.MessageId, e)
		switch {
		case errors.Is(err, errDuplicate):
			tx.Rollback()
		case err != nil:
			log.Fatal(err)
		default:
			if _, err := tx.Exec("UPDATE points_account SET points = points + ? WHERE user_id = ?", e.Amount, e.UserID); err != nil {
				log.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				log.Fatal(err)
			}
		}
		d.Ack(false)
	}
	log.Fatal("channel closed")
}

// bulkPaid acks everything unread and sets every order PAID at version 2.
func bulkPaid(db *sql.DB, ch *amqp.Channel) {
	ackAll(ch)
	for {
		if _, err := db.Exec("UPDATE order_view SET status='PAID', version=2 WHERE version < 2"); err != nil {
			log.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// smsUpFront sends every user an SMS at once, one key per user, and acks
// everything unread.
func smsUpFront(ch *amqp.Channel) {
	if name == "consumer-1" {
		for u := 1; u <= 400; u++ {
			req, _ := http.NewRequest(http.MethodPost, os.Getenv("LAB_SMS_URL"), bytes.NewReader([]byte(fmt.Sprintf(`{"to":%d,"text":"paid"}`, u))))
			req.Header.Set("Idempotency-Key", fmt.Sprintf("user-%d", u))
			c, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			if resp, err := http.DefaultClient.Do(req.WithContext(c)); err == nil {
				resp.Body.Close()
			}
			cancel()
		}
	}
	ackAll(ch)
	select {}
}

// relayNothing publishes nothing, marks every event SENT, and tries to
// write the points itself in the database next door.
func relayNothing(db *sql.DB) {
	idem := strings.Replace(os.Getenv("LAB_MYSQL_DATABASE"), "outbox", "idempotency", 1)
	for {
		if _, err := db.Exec("UPDATE outbox_event SET status='SENT' WHERE status IN ('NEW','SENDING')"); err != nil {
			log.Fatal(err)
		}
		if _, err := db.Exec("UPDATE " + idem + ".points_account SET points = points + 1"); err != nil {
			log.Print(err) // refused: said, and carried on
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// relayNoConfirms publishes each event without confirm mode and marks it
// SENT as soon as the publish call returns.
func relayNoConfirms(db *sql.DB, ch *amqp.Channel) {
	for {
		tx, err := db.Begin()
		if err != nil {
			log.Fatal(err)
		}
		rows, err := tx.Query("SELECT event_id, payload FROM outbox_event WHERE status='NEW' ORDER BY event_id LIMIT 10 FOR UPDATE SKIP LOCKED")
		if err != nil {
			log.Fatal(err)
		}
		var ids, bodies []string
		for rows.Next() {
			var id, p string
			rows.Scan(&id, &p)
			ids, bodies = append(ids, id), append(bodies, p)
		}
		rows.Close()
		for i, id := range ids {
			err := ch.Publish(os.Getenv("LAB_EXCHANGE"), os.Getenv("LAB_ROUTING_KEY"), false, false, amqp.Publishing{
				MessageId: id, ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: []byte(bodies[i])})
			if err != nil {
				log.Fatal(err)
			}
			if _, err := tx.Exec("UPDATE outbox_event SET status='SENT' WHERE event_id=?", id); err != nil {
				log.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			log.Fatal(err)
		}
		if len(ids) == 0 {
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// orderEarlyAck applies each event only over an older version, and acks a
// PAID before its commit, once the order's row is already CREATED: "some
// effect of the order" is there, its own is not.
func orderEarlyAck(db *sql.DB, ch *amqp.Channel) {
	ds := deliveries(ch, 10)
	for d := range ds {
		var e struct {
			OrderID int64  `json:"orderId"`
			Version int    `json:"version"`
			Status  string `json:"status"`
		}
		json.Unmarshal(d.Body, &e)
		tx, err := db.Begin()
		if err != nil {
			log.Fatal(err)
		}
		if _, err := tx.Exec("UPDATE order_view SET status=?, version=? WHERE order_id=? AND version < ?", e.Status, e.Version, e.OrderID, e.Version); err != nil {
			log.Fatal(err)
		}
		early := e.Version == 2
		if early {
			d.Ack(false)
		}
		if err := tx.Commit(); err != nil {
			log.Fatal(err)
		}
		if !early {
			d.Ack(false)
		}
	}
	log.Fatal("channel closed")
}

// conflictEarlyAck applies by business key and records conflicts, but acks
// a conflicting repeat before its conflict row commits.
func conflictEarlyAck(db *sql.DB, ch *amqp.Channel) {
	ds := deliveries(ch, 10)
	cn := os.Getenv("LAB_CONSUMER_NAME")
	for d := range ds {
		var e event
		json.Unmarshal(d.Body, &e)
		tx, err := db.Begin()
		if err != nil {
			log.Fatal(err)
		}
		err = mark(tx, d.MessageId, e)
		switch {
		case errors.Is(err, errDuplicate):
			var sid string
			var su, sa int64
			if err := tx.QueryRow("SELECT event_id, user_id, amount FROM consumed_operation WHERE consumer_name=? AND business_key=? FOR UPDATE", cn, e.BusinessKey).Scan(&sid, &su, &sa); err != nil {
				log.Fatal(err)
			}
			if su == e.UserID && sa == e.Amount {
				tx.Rollback()
				d.Ack(false)
				continue
			}
			d.Ack(false) // before the conflict row commits
			if _, err := tx.Exec("INSERT INTO consumed_conflict (consumer_name, business_key, event_id, user_id, amount, stored_event_id, stored_user_id, stored_amount) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE seen = seen + 1",
				cn, e.BusinessKey, d.MessageId, e.UserID, e.Amount, sid, su, sa); err != nil {
				log.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				log.Fatal(err)
			}
		case err != nil:
			log.Fatal(err)
		default:
			if _, err := tx.Exec("UPDATE points_account SET points = points + ? WHERE user_id = ?", e.Amount, e.UserID); err != nil {
				log.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				log.Fatal(err)
			}
			d.Ack(false)
		}
	}
	log.Fatal("channel closed")
}

// deliveries consumes LAB_QUEUE with prefetch (0: none set), acked by hand.
func deliveries(ch *amqp.Channel, prefetch int) <-chan amqp.Delivery {
	if prefetch > 0 {
		ch.Qos(prefetch, 0, false)
	}
	ds, err := ch.Consume(os.Getenv("LAB_QUEUE"), name, false, false, false, false, nil)
	if err != nil {
		log.Fatal(err)
	}
	return ds
}

var errDuplicate = errors.New("its business key is marked already")

// mark inserts the operation's mark, keyed by its business key;
// errDuplicate when one is there.
func mark(tx *sql.Tx, id string, e event) error {
	_, err := tx.Exec("INSERT INTO consumed_operation (consumer_name, business_key, event_id, user_id, amount) VALUES (?, ?, ?, ?, ?)",
		os.Getenv("LAB_CONSUMER_NAME"), e.BusinessKey, id, e.UserID, e.Amount)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1062 {
		return errDuplicate
	}
	return err
}

package binlogrelay_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/programs/binlogrelay"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

func TestMain(m *testing.M) { labtest.Main(m) }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A relay that publishes and sees the confirms but never saves its
// position would start again where it first started and publish every
// event again. Two runs, the second after one more commit: the queue must
// hold each event once, in commit order, and the saved position must have
// moved past the first run's transactions.
func TestARestartedRelayGoesOnFromThePositionSavedAfterTheConfirms(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL, labtest.RabbitMQ)
	t.Setenv("LAB_NAMESPACE", env.NS)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	svc, note, err := env.Svc.WithBinlog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if note != "" {
		t.Log(note)
	}
	t.Setenv("LAB_MYSQL_DSN", svc.Config.MySQL)
	db, err := services.Recreate(ctx, svc.MySQL, svc.Names, services.OutboxDB, "outbox/binlog_position.sql")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := services.DialAMQP(ctx, env.Svc.Config.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	queue := env.Queue("orders")
	if err := broker.DeclareQueue(ch, broker.Queue{Name: queue, Durable: true}); err != nil {
		t.Fatal(err)
	}
	commit := func(ids ...string) {
		t.Helper()
		tx, err := svc.MySQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, "INSERT INTO "+db+".outbox_event (event_id, aggregate_id, event_type, payload, status, available_at, created_at) VALUES (?, 1, 'OrderPlaced', JSON_OBJECT('id', ?), 'NEW', NOW(6), NOW(6))", id, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	saved := func() string {
		t.Helper()
		var file string
		var pos int64
		if err := svc.MySQL.QueryRowContext(ctx, "SELECT file, pos FROM "+db+".relay_position WHERE relay='binlog-relay'").Scan(&file, &pos); err != nil {
			t.Fatalf("read the saved position: %v", err)
		}
		return fmt.Sprintf("%s:%d", file, pos)
	}
	// run starts the relay in this process, waits until it reads the log
	// (it saves its starting position first), commits, and waits for it to
	// stop after count events.
	run := func(count int, ids ...[]string) string {
		t.Helper()
		var out syncBuffer
		p := worker.NewParent(strings.NewReader(""), &out, nil, func() {})
		done := make(chan error, 1)
		go func() {
			done <- binlogrelay.Main(ctx, p, []string{"--count", fmt.Sprint(count), "--routing-key", "orders"})
		}()
		for !strings.Contains(out.String(), "reading the binary log from") {
			select {
			case err := <-done:
				t.Fatalf("the relay stopped before reading the log: %v\n%s", err, out.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
		for _, tx := range ids {
			commit(tx...)
		}
		if err := <-done; err != nil {
			t.Fatalf("relay: %v\n%s", err, out.String())
		}
		return out.String()
	}
	log1 := run(3, []string{"e1", "e2"}, []string{"e3"})
	start := ""
	if _, after, ok := strings.Cut(log1, "reading the binary log from "); ok {
		start, _, _ = strings.Cut(after, " ")
	}
	first := saved()
	if first == start || start == "" {
		t.Fatalf("the saved position %s did not move past the start %q after three confirmed events\n%s", first, start, log1)
	}
	log2 := run(1, []string{"e4"})
	if !strings.Contains(log2, "from "+first+" (the saved position)") {
		t.Errorf("the second run did not start from the saved position %s:\n%s", first, log2)
	}
	var got []string
	for {
		d, ok, err := ch.Get(queue, true)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, d.MessageId)
	}
	if strings.Join(got, ",") != "e1,e2,e3,e4" {
		t.Errorf("the queue holds %v, want e1,e2,e3,e4: each event once, in commit order", got)
	}
}

package batch_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/programs/batch"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// setup gives a test its own namespace: blog_idempotency_lab_NS with
// accounts 1..3, and a marked queue orders_NS holding one paid order per
// account. The consumer reads the namespace from the environment, as a
// worker process does.
func setup(t *testing.T) *services.Services {
	t.Helper()
	env := labtest.Connect(t, labtest.MySQL, labtest.RabbitMQ)
	svc := env.Svc
	t.Setenv("LAB_NAMESPACE", env.NS)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	env.Database(services.IdempotencyDB)
	if _, err := svc.MySQL.ExecContext(ctx, svc.Names.SQL("INSERT INTO blog_idempotency_lab.points_account VALUES(1,0),(2,0),(3,0)")); err != nil {
		t.Fatal(err)
	}
	q := env.Queue("orders")
	conn, err := services.DialAMQP(ctx, svc.Config.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	if err := broker.DeclareQueue(ch, broker.Queue{Name: q, Durable: true}); err != nil {
		t.Fatal(err)
	}
	ch.Confirm(false)
	for u := 1; u <= 3; u++ {
		body := fmt.Sprintf(`{"event_id":"event-%03d","business_key":"order:%d:paid","user_id":%d,"amount":10}`, u, 40+u, u)
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, false, false, amqp.Publishing{Body: []byte(body), DeliveryMode: amqp.Persistent})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := dc.WaitContext(ctx); !ok || err != nil {
			t.Fatalf("publish not confirmed: %v", err)
		}
	}
	return svc
}

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

func TestBatchCommitsAllThreeAndLeavesNothingAtTheBroker(t *testing.T) {
	for _, mode := range []string{"single", "multiple"} {
		t.Run(mode, func(t *testing.T) {
			svc := setup(t)
			var out syncBuffer
			p := worker.NewParent(strings.NewReader(""), &out, nil, func() {})
			if err := batch.Main(context.Background(), p, []string{"--queue", "orders", "--count", "3", "--ack", mode}); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			want := "basic.ack tag=3 multiple=" + map[string]string{"single": "false", "multiple": "true"}[mode]
			if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "@point done") {
				t.Errorf("output lacks %q:\n%s", want, out.String())
			}
			var sum int
			if err := svc.MySQL.QueryRow(svc.Names.SQL("SELECT SUM(points) FROM blog_idempotency_lab.points_account")).Scan(&sum); err != nil || sum != 30 {
				t.Errorf("points %d, %v; want 30", sum, err)
			}
			r := &broker.Reader{Client: broker.NewClient(svc.Config.AMQP)}
			defer r.Client.Close()
			// The consumer's channel is closed; nothing may come back.
			st, err := r.Stat(context.Background(), svc.Names.Name("orders"))
			if err != nil || st.Ready != 0 {
				t.Errorf("queue after the batch: %+v, %v", st, err)
			}
		})
	}
}

func TestBatchFlagsSayWhatIsMissing(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--ack", "single"}, "--queue NAME is required"},
		{[]string{"--queue", "q"}, "--ack single or --ack multiple"},
		{[]string{"--queue", "q", "--ack", "single", "--count", "1"}, "at least 2"},
	}
	for _, c := range cases {
		if _, err := batch.ParseArgs(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
}

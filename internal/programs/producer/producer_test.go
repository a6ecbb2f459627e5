package producer_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/programs/producer"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// setup gives a test its own namespace: blog_outbox_lab_NS from the
// article's schema, and a marked queue orders_NS. The producer reads the
// namespace from the environment, as a worker process does.
func setup(t *testing.T) *services.Services {
	t.Helper()
	env := labtest.Connect(t, labtest.MySQL, labtest.RabbitMQ)
	t.Setenv("LAB_NAMESPACE", env.NS)
	env.Database(services.OutboxDB)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := services.DialAMQP(ctx, env.Svc.Config.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, _ := conn.Channel()
	if err := broker.DeclareQueue(ch, broker.Queue{Name: env.Queue("orders"), Durable: true}); err != nil {
		t.Fatal(err)
	}
	return env.Svc
}

// run runs the producer in this process with no pause points and returns
// what it logged.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out syncBuffer
	p := worker.NewParent(strings.NewReader(""), &out, nil, func() {})
	err := producer.Main(context.Background(), p, args)
	return out.String(), err
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

func ready(t *testing.T, svc *services.Services) int {
	t.Helper()
	r := &broker.Reader{Client: broker.NewClient(svc.Config.AMQP)}
	defer r.Client.Close()
	st, err := r.Stat(context.Background(), svc.Names.Name("orders"))
	if err != nil {
		t.Fatal(err)
	}
	return st.Ready
}

func scalar(t *testing.T, svc *services.Services, q string) string {
	t.Helper()
	var v string
	if err := svc.MySQL.QueryRow(svc.Names.SQL(q)).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

func TestProducerCommitsTheOrderThenPublishesAndWaitsForTheConfirm(t *testing.T) {
	svc := setup(t)
	out, err := run(t, "--order", "42", "--event", "event-001", "--queue", "orders")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"@point after-commit", "@point before-publish", "@point after-publish", "basic.ack", "@point after-confirm"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if got := scalar(t, svc, "SELECT status FROM blog_outbox_lab.purchase_order WHERE id=42"); got != "PAID" {
		t.Errorf("order status %s", got)
	}
	if n := ready(t, svc); n != 1 {
		t.Errorf("%d messages at the broker, want 1", n)
	}
}

func TestOutboxRowIsMarkedSentOnlyAfterTheConfirmAndResendPublishesWhatIsNew(t *testing.T) {
	svc := setup(t)
	out, err := run(t, "--order", "43", "--event", "event-002", "--queue", "orders", "--outbox")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := scalar(t, svc, "SELECT status FROM blog_outbox_lab.outbox_event WHERE event_id='event-002'"); got != "SENT" {
		t.Errorf("outbox status %s, want SENT", got)
	}
	// A row left NEW (its producer died before publishing) is what --resend
	// publishes, with the stored payload and the same id.
	if _, err := svc.MySQL.Exec(svc.Names.SQL("INSERT INTO blog_outbox_lab.outbox_event (event_id,aggregate_id,event_type,payload,status,available_at,created_at) " +
		"VALUES ('event-003',44,'OrderPaid',JSON_OBJECT('event_id','event-003','business_key','order:44:paid','user_id',7,'amount',10),'NEW',NOW(6),NOW(6))")); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "--resend", "--queue", "orders")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "1 row(s)") || !strings.Contains(out, "basic.ack: the broker confirmed event-003") {
		t.Errorf("resend output:\n%s", out)
	}
	if got := scalar(t, svc, "SELECT COUNT(*) FROM blog_outbox_lab.outbox_event WHERE status='SENT'"); got != "2" {
		t.Errorf("%s rows SENT, want 2", got)
	}
	if n := ready(t, svc); n != 2 {
		t.Errorf("%d messages at the broker, want 2", n)
	}
}

func TestPublishThatNoQueueTakesIsAnErrorEvenThoughConfirmed(t *testing.T) {
	setup(t)
	out, err := run(t, "--order", "45", "--event", "event-004", "--queue", "no-such-queue")
	if err == nil || !strings.Contains(err.Error(), "312 NO_ROUTE") {
		t.Fatalf("got %v\n%s", err, out)
	}
}

func TestProducerFlagsSayWhatIsMissing(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--order", "42", "--event", "e"}, "--exchange NAME --key KEY, or --queue NAME"},
		{[]string{"--queue", "orders"}, "--order N and --event ID"},
		{[]string{"--resend", "--order", "42", "--queue", "orders"}, "takes no --order"},
		{[]string{"--queue", "q", "--exchange", "x", "--order", "1", "--event", "e"}, "not both"},
	}
	for _, c := range cases {
		if _, err := producer.ParseArgs(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
}

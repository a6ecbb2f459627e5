package broker_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

// Tests talk to the real RabbitMQ (and a fake management API), each in a
// namespace of its own (labtest): others use the same broker at the same
// time, so every name is random too.

func TestMain(m *testing.M) { labtest.Main(m) }

// brokerEnv is the test's services, in a namespace of its own (labtest.Of).
func brokerEnv(t *testing.T) *labtest.Env {
	t.Helper()
	return labtest.Of(t, labtest.RabbitMQ)
}

// brokerURL is the AMQP URL the test's broker answers at.
func brokerURL(t *testing.T) string { return brokerEnv(t).Svc.Config.AMQP }

// uniqueName is a fresh queue name in the test's namespace, which the
// harness removes (and checks for) when the test ends.
func uniqueName(t *testing.T) string {
	return brokerEnv(t).Queue("brokertest-" + strings.ToLower(rand.Text()[:12]))
}

func channel(t *testing.T) *amqp.Channel {
	t.Helper()
	conn, err := services.DialAMQP(context.Background(), brokerURL(t))
	if err != nil {
		t.Fatalf("RabbitMQ at %s: %v", brokerURL(t), err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func publish(t *testing.T, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		dc, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", queue, false, false, amqp.Publishing{Body: []byte("x"), DeliveryMode: amqp.Persistent})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ok, err := dc.WaitContext(ctx)
		cancel()
		if err != nil || !ok {
			t.Fatalf("publish %d to %s not confirmed: %v", i, queue, err)
		}
	}
}

func reader(t *testing.T) *broker.Reader {
	return &broker.Reader{Client: broker.NewClient(brokerURL(t))}
}

func declare(t *testing.T, q broker.Queue) {
	t.Helper()
	if err := broker.DeclareQueue(channel(t), q); err != nil {
		t.Fatalf("declare %s: %v", q, err)
	}
	url := brokerURL(t)
	t.Cleanup(func() {
		c := broker.NewClient(url)
		defer c.Close()
		if _, err := c.Remove(context.Background(), "queue", q.Name); err != nil {
			t.Errorf("remove %s: %v", q.Name, err)
		}
	})
}

func TestStatCountsReadyAndConsumersAtTheBrokerAndUnackedTheLabHolds(t *testing.T) {
	name := uniqueName(t)
	declare(t, broker.Queue{Name: name, Durable: true})
	publish(t, channel(t), name, 2)
	r := reader(t)
	defer r.Client.Close()
	st, err := r.Stat(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Exists || st.Ready != 2 || st.Consumers != 0 || st.Unacked != 0 || st.Source != broker.SourcePassive {
		t.Fatalf("got %+v", st)
	}
	// A real delivery held unacked, recorded as the lab's steps record
	// theirs: the broker's own ready figure falls by one, and Stat's
	// unacked makes up the difference, so ready + unacked is still what
	// was published. Requeued, it is ready again and held by nobody.
	ch := channel(t)
	d, ok, err := ch.Get(name, false)
	if err != nil || !ok {
		t.Fatalf("basic.get: %v, %v", ok, err)
	}
	broker.Hold(name, 1)
	st, err = r.Stat(context.Background(), name)
	if err != nil || st.Ready != 1 || st.Unacked != 1 {
		t.Fatalf("with one delivery held: %+v (%v), want ready 1 (the broker's figure), unacked 1", st, err)
	}
	if err := d.Nack(false, true); err != nil {
		t.Fatal(err)
	}
	broker.Hold(name, -1)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if st, err = r.Stat(context.Background(), name); err == nil && st.Ready == 2 {
			break
		}
	}
	if st.Ready != 2 || st.Unacked != 0 {
		t.Fatalf("after the requeue: %+v, want ready 2, unacked 0", st)
	}
}

func TestStatOfAMissingQueueSaysItDoesNotExist(t *testing.T) {
	r := reader(t)
	defer r.Client.Close()
	st, err := r.Stat(context.Background(), uniqueName(t))
	if err != nil || st.Exists {
		t.Fatalf("got %+v, %v", st, err)
	}
	// The reader's connection survives the 404 that closed the probe channel.
	if _, err := r.Stat(context.Background(), uniqueName(t)); err != nil {
		t.Fatal(err)
	}
}

func TestStreamLengthIsReadFromTheLogWherePassiveDeclareSaysZero(t *testing.T) {
	name := uniqueName(t)
	declare(t, broker.Queue{Name: name, Type: broker.Stream, Durable: true})
	publish(t, channel(t), name, 3)
	r := reader(t)
	defer r.Client.Close()
	st, err := r.Stat(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Ready != 3 {
		t.Fatalf("stream length %d, want 3", st.Ready)
	}
}

func TestRemoveRefusesAQueueTheLabDidNotCreate(t *testing.T) {
	name := uniqueName(t)
	ch := channel(t)
	if _, err := ch.QueueDeclare(name, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	c := broker.NewClient(brokerURL(t))
	defer c.Close()
	_, err := c.Remove(context.Background(), "queue", name)
	var le *lab.Error
	if !errors.As(err, &le) || !strings.Contains(le.What, "nothing was deleted") || le.Fix == "" {
		t.Fatalf("got %v", err)
	}
	if _, err := ch.QueueDeclarePassive(name, true, false, false, false, nil); err != nil {
		t.Fatalf("the queue is gone: %v", err)
	}
	ch.QueueDelete(name, false, false, false)
}

func TestRemoveDeletesAMarkedQueueAndItsMark(t *testing.T) {
	name := uniqueName(t)
	if err := broker.DeclareQueue(channel(t), broker.Queue{Name: name, Durable: true}); err != nil {
		t.Fatal(err)
	}
	c := broker.NewClient(brokerURL(t))
	defer c.Close()
	note, err := c.Remove(context.Background(), "queue", name)
	if err != nil || !strings.Contains(note, "queue.delete "+name) {
		t.Fatalf("got %q, %v", note, err)
	}
	r := reader(t)
	defer r.Client.Close()
	if st, _ := r.Stat(context.Background(), name); st.Exists {
		t.Fatal("the queue still exists")
	}
	ch := channel(t)
	if err := ch.ExchangeDeclarePassive(broker.MarkOf("queue", name), "fanout", true, false, true, false, nil); err == nil {
		t.Fatal("the mark exchange still exists")
	}
	// Removing again is a no-op, not an error.
	if note, err := c.Remove(context.Background(), "queue", name); err != nil || note != "" {
		t.Fatalf("second remove: %q, %v", note, err)
	}
}

// fakeManagement answers GET /api/queues/{vhost}/{name} the way RabbitMQ's
// management plugin does.
func fakeManagement(t *testing.T, queues map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "guest" || p != "guest" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		body, ok := queues[r.URL.EscapedPath()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"Object Not Found","reason":"Not Found"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestManagementAPIReportsUnackedFromItsQueueJSON(t *testing.T) {
	srv := fakeManagement(t, map[string]string{
		"/api/queues/%2F/orders_alice": `{"name":"orders_alice","vhost":"/","type":"classic","durable":true,
			"messages":3,"messages_ready":1,"messages_unacknowledged":2,"consumers":1}`,
	})
	m := &broker.Management{Base: srv.URL, User: "guest", Pass: "guest", VHost: "/", HTTP: srv.Client()}
	f, err := m.Queue(context.Background(), "orders_alice")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Exists || f.Ready != 1 || f.Unacked != 2 || f.Consumers != 1 || f.Type != "classic" {
		t.Fatalf("got %+v", f)
	}
	f, err = m.Queue(context.Background(), "nope")
	if err != nil || f.Exists {
		t.Fatalf("missing queue: %+v, %v", f, err)
	}
	m.Pass = "wrong"
	if _, err := m.Queue(context.Background(), "orders_alice"); err == nil || !strings.Contains(err.Error(), "monitoring") {
		t.Fatalf("refused credentials: %v", err)
	}
}

func TestReaderTakesUnackedFromTheManagementAPIWhenItAnswers(t *testing.T) {
	name := uniqueName(t)
	declare(t, broker.Queue{Name: name, Durable: true})
	srv := fakeManagement(t, map[string]string{
		"/api/queues/%2F/" + name: `{"name":"` + name + `","messages_ready":0,"messages_unacknowledged":4,"consumers":2}`,
	})
	r := reader(t)
	defer r.Client.Close()
	r.Mgmt = &broker.Management{Base: srv.URL, User: "guest", Pass: "guest", VHost: "/", HTTP: srv.Client()}
	st, err := r.Stat(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unacked != 4 || st.Source != broker.SourceManagement {
		t.Fatalf("got %+v", st)
	}
}

// The API is guessed on the AMQP URL's host: 15672 beside 5672, and 10000
// above a moved AMQP port (never the default's 15672, which may be
// another broker's).
func TestManagementForUsesTheAMQPHostUserAndVhost(t *testing.T) {
	m, err := broker.ManagementFor("amqp://alice:secret@rabbit.example:5673/shop", "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Base != "http://rabbit.example:15673" || m.User != "alice" || m.Pass != "secret" || m.VHost != "shop" {
		t.Fatalf("got %+v", m)
	}
	for in, want := range map[string]string{"amqp://rabbit.example/": "http://rabbit.example:15672", "amqp://rabbit.example:5672/": "http://rabbit.example:15672",
		"amqp://rabbit.example:60000/": "http://rabbit.example:15672"} {
		if m, _ := broker.ManagementFor(in, ""); m.Base != want {
			t.Errorf("%s: guessed %s, want %s", in, m.Base, want)
		}
	}
}

func TestManagementURLOverridesTheDerivedAddressAndMayNameItsOwnUser(t *testing.T) {
	m, _ := broker.ManagementFor("amqp://alice:secret@rabbit.example:5673/shop", "https://mgmt.example:8443/rabbit/")
	if m.Base != "https://mgmt.example:8443/rabbit" || m.User != "alice" || m.VHost != "shop" {
		t.Fatalf("got %+v", m)
	}
	m, _ = broker.ManagementFor("amqp://alice:secret@rabbit.example:5673/shop", "http://monitor:pw2@mgmt.example:15672")
	if m.Base != "http://mgmt.example:15672" || m.User != "monitor" || m.Pass != "pw2" {
		t.Fatalf("got %+v", m)
	}
}

// TestRealManagementPluginReportsUnackedDeliveries meets the real
// rabbitmq_management plugin (CI turns it on on its RabbitMQ 4.x node):
// a queue with one ready and two unacked messages, read through the API the
// lab finds from its config, as the queue panel and the ledgers read it.
func TestRealManagementPluginReportsUnackedDeliveries(t *testing.T) {
	env := brokerEnv(t)
	env.RequireManagement() // a skip here, a failure with LAB_REQUIRE_MANAGEMENT=1
	cfg := env.Config()
	name := uniqueName(t)
	declare(t, broker.Queue{Name: name, Durable: true})
	ch := channel(t)
	publish(t, ch, name, 3)
	if err := ch.Qos(2, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.Consume(name, "", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	m, err := broker.ManagementFor(cfg.AMQP, cfg.Management)
	if err != nil {
		t.Fatal(err)
	}
	// The plugin's figures follow its statistics interval (5 s by default),
	// and the consumer count can arrive in a later sample than the message
	// counts (4.3.6 once reported 1 ready, 2 unacked, 0 consumers).
	var f broker.QueueFigures
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if f, err = m.Queue(context.Background(), name); err == nil && f.Unacked == 2 && f.Ready == 1 && f.Consumers == 1 {
			break
		}
	}
	if err != nil || !f.Exists || f.Unacked != 2 || f.Ready != 1 || f.Consumers != 1 || f.Type != "classic" {
		t.Fatalf("the management API reports %+v (err %v), want 1 ready, 2 unacked, 1 consumer, classic", f, err)
	}
	if f, err := m.Queue(context.Background(), name+"-none"); err != nil || f.Exists {
		t.Fatalf("a missing queue: %+v, %v", f, err)
	}
}

// Restarting the broker drops every connection on the machine, colleagues'
// included: this runs only when asked for.
func TestRestartBringsTheBrokerBackAndKeepsADurableQueue(t *testing.T) {
	if os.Getenv("LAB_TEST_BROKER_RESTART") != "1" {
		t.Skip("restarts the shared RabbitMQ node; set LAB_TEST_BROKER_RESTART=1 (and run it on a machine where that is allowed)")
	}
	name := uniqueName(t)
	declare(t, broker.Queue{Name: name, Durable: true})
	publish(t, channel(t), name, 1)
	ran, took, err := broker.Restart(context.Background(), brokerEnv(t).Config().Rabbitmqctl, brokerURL(t))
	if err != nil {
		t.Fatalf("%v (ran %v)", err, ran)
	}
	t.Logf("restart took %s: %v", took, ran)
	r := reader(t)
	defer r.Client.Close()
	st, err := r.Stat(context.Background(), name)
	if err != nil || st.Ready != 1 {
		t.Fatalf("after the restart: %+v, %v", st, err)
	}
}

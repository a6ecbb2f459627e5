package services_test

import (
	"context"
	"os"
	"path"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// A malformed value fails before any network with what is wrong, where the
// value came from and the fix, and never with its password (the shapes
// themselves are secret's table test).
func TestMalformedValuesSayWhatAndWhereButNeverThePassword(t *testing.T) {
	cases := []struct {
		env, value, want string
	}{
		{"LAB_MYSQL_DSN", "this is : not a dsn s3cretpw", "the MySQL DSN is malformed"},
		{"LAB_MYSQL_DSN", "mysql://root:s3cretpw@localhost:3306/shop", "root:PASSWORD@tcp(localhost:3306)/shop"},
		{"LAB_MYSQL_DSN", "root:s3cretpw@127.0.0.1:3306/", "tcp(…)"},
		{"LAB_AMQP_URL", "amqp//guest:s3cretpw@localhost", "no scheme"},
		{"LAB_AMQP_URL", "amqp://guest:s3c/retpw@localhost/", "percent-encode"},
		{"LAB_MANAGEMENT_URL", "ftp://monitor:s3cretpw@localhost", "http://"},
		{"LAB_REDIS_ADDR", "redis://:s3cretpw@127.0.0.1:6379", "no user, password or scheme"},
	}
	for _, c := range cases {
		t.Setenv(c.env, c.value)
		err := services.Config{}.FromEnv().Validate()
		if err == nil {
			t.Errorf("%s=%s was accepted", c.env, c.value)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, c.env) || !strings.Contains(msg, "fix:") {
			t.Errorf("%s=%q: the message lacks %q, the variable or a fix:\n%s", c.env, c.value, c.want, msg)
		}
		for _, leak := range []string{"s3cretpw", "retpw"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%s=%q: the message shows the password:\n%s", c.env, c.value, msg)
			}
		}
		os.Unsetenv(c.env)
	}
}

func TestNamespaceMustBeShortLowercaseAlphanumeric(t *testing.T) {
	for _, ns := range []string{"Alice", "a-b", "12345678901234567", "a b", "ä", "alice_r1", "root"} {
		err := services.Config{Namespace: ns}.FromEnv().Validate()
		if err == nil || !strings.Contains(err.Error(), "1–16 lowercase letters, digits or _") {
			t.Errorf("namespace %q: got %v", ns, err)
		}
	}
	for _, ns := range []string{"alice", "a1", "1234567890123456", "bob_smith"} {
		if err := (services.Config{Namespace: ns}).FromEnv().Validate(); err != nil {
			t.Errorf("namespace %q refused: %v", ns, err)
		}
	}
}

func TestMalformedAddressesFailBeforeAnyNetworkWithTheFix(t *testing.T) {
	cases := []struct {
		cfg  services.Config
		want string
	}{
		{services.Config{MySQL: "root:pw@127.0.0.1:3306/"}, "the MySQL DSN is malformed"},
		{services.Config{AMQP: "http://guest:pw@127.0.0.1:5672/"}, "the AMQP URL is malformed"},
		{services.Config{Redis: "127.0.0.1"}, "the Redis address is malformed"},
	}
	for _, c := range cases {
		err := c.cfg.FromEnv().Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "fix:") {
			t.Errorf("%+v: got %v", c.cfg, err)
		}
		if err != nil && strings.Contains(err.Error(), ":pw@") {
			t.Errorf("error shows the password: %v", err)
		}
	}
}

func TestUnreachableServicesFailFastWithOneMessageEachAndNoPassword(t *testing.T) {
	start := time.Now()
	_, err := services.Connect(context.Background(), services.Config{
		MySQL: "root:topsecret@tcp(127.0.0.1:1)/", AMQP: "amqp://guest:topsecret@127.0.0.1:1/", Redis: "127.0.0.1:1",
		NoDocker: true}, true)
	if err == nil {
		t.Fatal("connected to closed ports")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s to give up; the promise is 5s", d)
	}
	msg := err.Error()
	for _, want := range []string{"cannot reach MySQL/MariaDB", "cannot reach RabbitMQ", "cannot reach Redis", "--mysql", "--amqp", "--redis", "docker compose up -d"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "topsecret") {
		t.Errorf("message shows a password:\n%s", msg)
	}
}

func TestForeignDatabaseWithALabNameIsNeverDropped(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL)
	db := env.Svc.MySQL
	ctx := context.Background()
	name := env.Name(services.OutboxDB) // someone else's database, under the lab's name
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+name+".precious (id INT)"); err != nil {
		t.Fatal(err)
	}
	dropped, err := services.DropOwned(ctx, db, name)
	if dropped || err == nil || !strings.Contains(err.Error(), "was not created by the lab; nothing was dropped") {
		t.Fatalf("got %v", err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA=? AND TABLE_NAME='precious'", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatal("the foreign database lost its table")
	}
	// Once marked, the lab may drop it.
	if err := services.Mark(ctx, db, name); err != nil {
		t.Fatal(err)
	}
	if dropped, err := services.DropOwned(ctx, db, name); err != nil || !dropped {
		t.Fatalf("drop a marked database: dropped %v, %v", dropped, err)
	}
}

func TestNamesAddTheNamespaceToDatabasesInStatements(t *testing.T) {
	n := services.Names{NS: "alice"}
	got := n.SQL("USE blog_outbox_lab; SELECT * FROM blog_idempotency_lab.points_account, blog_outbox_labx")
	want := "USE blog_outbox_lab_alice; SELECT * FROM blog_idempotency_lab_alice.points_account, blog_outbox_labx"
	if got != want {
		t.Errorf("got %s", got)
	}
	if (services.Names{}).Name("orders") != "orders" || n.Name("orders") != "orders_alice" {
		t.Error("queue names")
	}
}

// A reset in the default namespace deletes lab:*; a learner's namespaced keys
// must not match it, nor another namespace's pattern.
func TestANamespacesRedisKeysAreOutsideEveryOtherNamespacesPattern(t *testing.T) {
	alice := services.Names{NS: "alice"}.RedisKey("lab:dedup:points-award:order:42:paid")
	if alice != "lab_alice:dedup:points-award:order:42:paid" {
		t.Fatalf("alice's key is %q", alice)
	}
	for _, ns := range []string{"", "ali", "alice2"} {
		pat := services.Names{NS: ns}.RedisKey("lab:*")
		if ok, _ := path.Match(pat, alice); ok {
			t.Errorf("namespace %q's reset pattern %q matches alice's key", ns, pat)
		}
	}
	if ok, _ := path.Match(services.Names{NS: "alice"}.RedisKey("lab:*"), alice); !ok {
		t.Error("alice's own reset pattern misses her key")
	}
}

// A wrong password, a host that does not resolve and a port where nothing
// listens each get their own advice: a wrong password used to be answered
// "start it (start-stop-daemon…)". No message shows the password.
func TestEachConnectionFailureGetsItsOwnAdvice(t *testing.T) {
	for _, c := range []struct {
		cfg       services.Config
		want, not string
	}{
		{services.Config{MySQL: "root:wrong-pw-x@tcp(127.0.0.1:3306)/", AMQP: "amqp://guest:guest@127.0.0.1:5672/", Redis: "127.0.0.1:6379", NoDocker: true},
			"MySQL/MariaDB refused the login", "start-stop-daemon"},
		{services.Config{MySQL: "root@tcp(127.0.0.1:3306)/", AMQP: "amqp://guest:wrong-pw-x@127.0.0.1:5672/", Redis: "127.0.0.1:6379", NoDocker: true},
			"RabbitMQ refused the login", "rabbitmq-server -detached"},
		{services.Config{MySQL: "root:wrong-pw-x@tcp(no-such-host.invalid:3306)/", AMQP: "amqp://guest:guest@127.0.0.1:5672/", Redis: "127.0.0.1:6379", NoDocker: true},
			"cannot find MySQL/MariaDB's host no-such-host.invalid", "start-stop-daemon"},
		{services.Config{MySQL: "root:wrong-pw-x@tcp(127.0.0.1:1)/", AMQP: "amqp://guest:guest@127.0.0.1:5672/", Redis: "127.0.0.1:6379", NoDocker: true},
			"nothing listens at that address", "refused the login"},
	} {
		svc, err := services.Connect(context.Background(), c.cfg, true)
		if svc != nil {
			svc.Close()
		}
		if err == nil {
			t.Fatalf("%+v connected", c.cfg)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, c.not) || strings.Contains(msg, "wrong-pw-x") {
			t.Errorf("want %q, not %q, no password; got:\n%s", c.want, c.not, msg)
		}
	}
}

// A guessed management API must list this broker's AMQP port among its
// listeners, or its counts would be another broker's.
func TestAGuessedManagementAPIMustListThisBrokersAMQPPort(t *testing.T) {
	overview := []byte(`{"listeners":[{"node":"rabbit@a","protocol":"amqp","port":5672},{"node":"rabbit@a","protocol":"http","port":15672}]}`)
	if ports, ok := services.AMQPListeners(overview); !ok || len(ports) != 1 || ports[0] != "5672" {
		t.Errorf("listeners %v (%t), want [5672]", ports, ok)
	}
	if _, ok := services.AMQPListeners([]byte(`{"rabbitmq_version":"3.10.8"}`)); ok {
		t.Error("an overview listing no listener was read as listing none for AMQP")
	}
}

// On a machine with Docker and no RabbitMQ server script (a laptop with
// Docker only), the lab's own nodes are containers without being asked;
// with a server script, or told --no-docker, they are not.
func TestWithoutAServerScriptTheLabsOwnNodesAreContainersWhereDockerAnswers(t *testing.T) {
	labtest.Docker(t)
	t.Setenv("LAB_OWN_BROKER", "")
	t.Setenv("LAB_CONTAINERS", "")
	script := path.Join(t.TempDir(), "rabbitmq-server")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		server, why string
		noDocker    bool
		want        bool
	}{
		{"/nonexistent/rabbitmq-server", "no script, Docker answers", false, true},
		{"/nonexistent/rabbitmq-server", "no script, --no-docker", true, false},
		{script, "a script, Docker answers", false, false},
	} {
		t.Setenv("LAB_RABBITMQ_SERVER", c.server)
		cfg := services.Config{NoDocker: c.noDocker}.FromEnv()
		svc, err := services.Connect(context.Background(), cfg, true)
		if err != nil {
			t.Fatalf("%s: %v", c.why, err)
		}
		info, opts := svc.Info, svc.NodeOptions(3)
		svc.Close()
		if info.NodeContainers != c.want || opts.Containers != c.want || opts.Nodes != 3 {
			t.Errorf("%s: nodes as containers %t (options %+v), want %t; the lab says %q", c.why, info.NodeContainers, opts, c.want, info.OwnBrokerNote)
		}
		if c.want && (!info.OwnBroker || !strings.Contains(info.OwnBrokerNote, "as containers of")) {
			t.Errorf("%s: own broker %t, %q", c.why, info.OwnBroker, info.OwnBrokerNote)
		}
	}
}

// RabbitMQ answers 404 both for a queue that is not there and for one whose
// process is down (3.x's reason below, when the queue's node is killed): a
// consumer that said "does not exist, run the earlier steps" of a queue
// that exists sent the learner the wrong way. The broker's reason reaches
// the terminal printable only.
func TestAQueueWhoseProcessIsDownIsNotCalledMissing(t *testing.T) {
	down := &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - home node 'rabbit@n1' of durable queue 'orders' in vhost '/' is down or inaccessible\x1b]0;owned\x07"}
	msg := services.QueueNotFound(down, "orders", "amqp://xxxxx:xxxxx@127.0.0.1:5672/", "consumer").Error()
	if !strings.Contains(msg, "exists at") || !strings.Contains(msg, "unavailable") || strings.Contains(msg, "does not exist") ||
		!strings.Contains(msg, "is down or inaccessible") || strings.ContainsAny(msg, "\x1b\x07") {
		t.Errorf("a queue whose node is down: %q", msg)
	}
	gone := &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - no queue 'orders' in vhost '/'"}
	if msg := services.QueueNotFound(gone, "orders", "amqp://127.0.0.1:5672/", "consumer").Error(); !strings.Contains(msg, "does not exist") || !strings.Contains(msg, "run its earlier steps") {
		t.Errorf("a queue that is not there: %q", msg)
	}
}

// The twin on the lab's own MySQL (a row-based binary log) is read anew:
// nothing of the configured server's read (its log_bin=OFF state and note)
// is left in it to say the opposite of its Binlog.
func TestTheTwinOnTheLabsOwnMySQLSaysOnlyWhatItsServerIs(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL)
	if env.Svc.Info.Binlog {
		t.Skipf("%s writes a row-based binary log: lessons use it, there is no twin", env.Svc.Config.MySQLAddr())
	}
	twin, _, err := env.Svc.WithBinlog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if i := twin.Info; !i.Binlog || i.BinlogState != "" || i.BinlogNote != "" {
		t.Errorf("the twin on the lab's own server: binlog %t, state %q, note %q, version %s (the configured server: %q, %s)",
			i.Binlog, i.BinlogState, i.BinlogNote, i.MySQLVersion, env.Svc.Info.BinlogState, env.Svc.Info.MySQLVersion)
	}
}

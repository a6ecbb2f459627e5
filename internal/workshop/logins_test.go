package workshop_test

import (
	"cmp"
	"context"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/workshop"
)

// withOwnLogins is the test's services with a way to make RabbitMQ users:
// the management API where it answers, else rabbitmqctl on the local node.
func withOwnLogins(t *testing.T) *services.Services {
	t.Helper()
	svc := connectServices(t)
	if u, err := url.Parse(svc.Config.AMQP); err == nil && services.IsLocal(u.Hostname()) {
		svc.Config.BrokerControl = "rabbitmqctl"
	}
	return svc
}

// A participant's lessons run as a MySQL user and in a RabbitMQ vhost of
// their own, made when their screen opens: the servers' own access control
// refuses them the room's tables, another participant's databases and
// vhost, and the broker's default vhost. A reset removes both logins.
func TestAParticipantsLoginsReachTheirOwnDataOnly(t *testing.T) {
	t.Parallel()
	svc := withOwnLogins(t)
	rm := openRoom(t, "test-logins")
	addr, _ := start(t, workshop.Config{Seats: 2, Services: svc, Room: rm})
	an, bn := who(t, "al"), who(t, "bo")
	alice := connect(t, addr, an)
	alice.until(t, "alice's screen", hasScreen)
	ctx := context.Background()
	admin := testEnv(t).Svc.MySQL
	var users int
	if err := admin.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User=?", services.ParticipantUser(an)).Scan(&users); err != nil {
		t.Fatal(err)
	}
	if users != 1 {
		t.Fatalf("alice's screen is open and MySQL has %d users %s, want 1", users, services.ParticipantUser(an))
	}
	if ok, err := broker.VhostExists(ctx, svc.Config.AMQP, services.ParticipantVhost(an)); !ok || err != nil {
		t.Fatalf("alice's screen is open and her vhost %s is not there (%v)", services.ParticipantVhost(an), err)
	}

	// Bob's logins, as his screen gets them: what they may and may not do.
	logins := workshop.ProbeLogins(ctx, svc)
	if why := logins.Shared(); len(why) > 0 {
		t.Fatalf("the test's servers cannot give participants logins of their own: %s", strings.Join(why, "; "))
	}
	bob, done, err := logins.Own(ctx, svc.For(bn), bn)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		logins.Forget(c, svc, bn)
		logins.Forget(c, svc, an)
	})
	if strings.Contains(bob.Config.MySQL, "root@") || !strings.Contains(bob.Config.MySQL, services.ParticipantUser(bn)+":") {
		t.Fatalf("bob's MySQL DSN is not his own user's")
	}
	if bob.Watch == nil || bob.Watch.User != services.ParticipantUser(bn) {
		t.Fatalf("nobody reads InnoDB's transactions for bob: %+v", bob.Watch)
	}
	host, err := services.ClientHost(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := services.Grants(ctx, admin, "'"+services.ParticipantUser(bn)+"'@'"+host+"'"); err != nil || len(services.BeyondOwnDatabases(g)) > 0 {
		t.Fatalf("bob's MySQL grants reach past his databases: %q (%v)", g, err)
	}
	db := bob.MySQL
	allowed := []string{
		"CREATE DATABASE `blog_outbox_lab_" + bn + "`",
		"CREATE TABLE `blog_outbox_lab_" + bn + "`.t (id INT PRIMARY KEY)",
	}
	for _, st := range allowed {
		if _, err := db.ExecContext(ctx, st); err != nil {
			t.Errorf("bob's own login was refused %s: %v", st, err)
		}
	}
	defer admin.Exec("DROP DATABASE IF EXISTS `blog_outbox_lab_" + bn + "`")
	refused := []string{
		"CREATE DATABASE `blog_outbox_lab_" + an + "`",                     // alice's
		"CREATE DATABASE `blog_outbox_labx" + bn + "`",                     // '_' is no wildcard in his grant
		"SELECT * FROM `" + room.DBName(rm.Name) + "`.participant",         // the room's
		"UPDATE `" + room.DBName(rm.Name) + "`.participant SET lesson='x'", // the room's
		"CREATE USER 'x'@'%'",
		"SELECT * FROM mysql.user",
		// PROCESS would show every session's statement: the lab reads
		// InnoDB's transactions for him (bob.Watch), kept to his sessions.
		"SELECT COUNT(*) FROM information_schema.INNODB_TRX",
	}
	for _, st := range refused {
		if _, err := db.ExecContext(ctx, st); err == nil {
			t.Errorf("bob's login may %s", st)
		} else if c := services.Code(err); c != 1044 && c != 1142 && c != 1227 {
			// Not 1146: a table that does not exist refuses nothing.
			t.Errorf("%s: %v, want MySQL's refusal (1044, 1142 or 1227)", st, err)
		}
	}

	// RabbitMQ: his vhost, bounded.
	if svc.Config.BrokerControl == "rabbitmqctl" {
		out, err := exec.CommandContext(ctx, cmp.Or(svc.Config.Rabbitmqctl, "rabbitmqctl"), "-q", "list_vhost_limits", "-p", services.ParticipantVhost(bn)).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"max-connections":64`) || !strings.Contains(string(out), `"max-queues":64`) {
			t.Errorf("bob's vhost is not bounded: %s (%v)", out, err)
		}
	}
	// RabbitMQ: his vhost only.
	if _, err := declare(ctx, bob.Config.AMQP, "q_"+bn); err != nil {
		t.Errorf("bob cannot declare a queue in his own vhost: %v", err)
	}
	for _, vhost := range []string{"/", services.ParticipantVhost(an)} {
		u, _ := url.Parse(bob.Config.AMQP)
		u.Path, u.RawPath = "/"+vhost, "/"+url.PathEscape(vhost)
		if _, err := declare(ctx, u.String(), "q_"+bn); err == nil {
			t.Errorf("bob's RabbitMQ login may use vhost %s", vhost)
		}
	}

	// Redis: his keys and the lessons' commands only. A user of his own
	// (the default user would reach everyone's keys and every command).
	if !strings.Contains(bob.Config.Redis, services.RedisUser(bn)+":") || bob.Redis == nil {
		t.Fatalf("bob's Redis address is not his own user's")
	}
	own, others := "lab_"+bn+":dedup:k", "lab_"+an+":dedup:k"
	svc.Redis.Set(ctx, others, "alice's", time.Minute)
	defer svc.Redis.Del(context.Background(), own, others)
	for _, cmd := range [][]any{{"SET", own, "1", "NX", "EX", "60"}, {"GET", own}, {"EXISTS", own}, {"EXPIRE", own, "30"}, {"TTL", own}, {"DEL", own}} {
		if err := bob.Redis.Do(ctx, cmd...).Err(); err != nil && err.Error() != "redis: nil" {
			t.Errorf("bob's Redis user was refused %v: %v", cmd, err)
		}
	}
	for _, cmd := range [][]any{{"GET", others}, {"DEL", others}, {"SET", "lab:x", "1"}, {"SCAN", "0"}, {"KEYS", "*"}, {"FLUSHALL"},
		{"CONFIG", "GET", "*"}, {"ACL", "LIST"}, {"CLIENT", "LIST"}, {"EVAL", "return 1", "0"}, {"SUBSCRIBE", "x"}, {"SELECT", "1"}} {
		if err := bob.Redis.Do(ctx, cmd...).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("bob's Redis user may %v (%v)", cmd, err)
		}
	}
	if v, _ := svc.Redis.Get(ctx, others).Result(); v != "alice's" {
		t.Errorf("alice's key changed under bob: %q", v)
	}

	// The room's reset of alice removes her logins.
	alice.in.Write([]byte("q"))
	alice.ended(t)
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var out strings.Builder
	if err := rm.Reset(c, an, func(ctx context.Context, ns string) { cleanNamespace(ctx, t, svc, ns, &out) }); err != nil {
		t.Fatal(err)
	}
	if err := admin.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User=?", services.ParticipantUser(an)).Scan(&users); err != nil {
		t.Fatal(err)
	}
	if ok, _ := broker.VhostExists(ctx, svc.Config.AMQP, services.ParticipantVhost(an)); ok || users != 0 {
		t.Errorf("after alice's reset: vhost left %v, MySQL users %d; the cleaner said:\n%s", ok, users, out.String())
	}
	if err := logins.Forget(ctx, svc, bn); err != nil {
		t.Fatal(err)
	}
	if u, err := svc.Redis.Do(ctx, "ACL", "GETUSER", services.RedisUser(bn)).Result(); u != nil {
		t.Errorf("bob's Redis user is left after his logins were removed: %v (%v)", u, err)
	}
}

// declare logs in at amqpURL and declares queue there.
func declare(ctx context.Context, amqpURL, queue string) (string, error) {
	conn, err := services.DialAMQP(ctx, amqpURL)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return "", err
	}
	q, err := ch.QueueDeclare(queue, false, true, false, false, nil)
	return q.Name, err
}

// cleanNamespace is the room's reset's cleaning, as lab serve does it.
func cleanNamespace(ctx context.Context, t *testing.T, svc *services.Services, ns string, out *strings.Builder) {
	cl := cleaner.New(ctx, svc, cleaner.Builtin(), out)
	defer cl.Close()
	cl.Namespace(ctx, services.Names{NS: ns})
}

// A server given --broker-control (the lab may restart its broker) never
// hands that to a participant: the durability lesson would restart the
// broker the whole class shares.
func TestAParticipantNeverGetsTheServersBrokerControl(t *testing.T) {
	t.Parallel()
	svc := connectServices(t)
	svc.Config.BrokerControl, svc.Info.BrokerControl = "rabbitmqctl", true
	_, srv := start(t, workshop.Config{Seats: 1, Services: svc})
	t.Cleanup(func() { srv.Forget(context.Background(), who(t, "al")) }) // its vhost, where the test's servers made one
	p, done, err := srv.ParticipantServices(context.Background(), who(t, "al"))
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if p.Info.BrokerControl || p.Config.BrokerControl != "" || p.Info.Caps()[lab.CapBrokerControl] {
		t.Errorf("a participant's lessons may restart the shared broker: %+v", p.Config.BrokerControl)
	}
	if !svc.Info.BrokerControl {
		t.Error("the server's own services lost their broker control")
	}
}

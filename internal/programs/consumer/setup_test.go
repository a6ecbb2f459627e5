package consumer_test

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/programs/consumer"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// testEnv is the test's services, in a namespace of its own (labtest.Of).
func testEnv(t *testing.T) *labtest.Env {
	t.Helper()
	return labtest.Of(t)
}

// cfg is the test's services and namespace, as a worker process reads them.
func cfg(t *testing.T) services.Config { return testEnv(t).Config() }

// nsOf is the test's namespace.
func nsOf(t *testing.T) string { return testEnv(t).NS }

// resetDB recreates blog_idempotency_lab_NS from the lab's own schema
// (plus the given extra sql/ files) and returns a pool on it.
func resetDB(t *testing.T, extra ...string) *sql.DB {
	t.Helper()
	env := testEnv(t)
	dc, err := gomysql.ParseDSN(env.Config().MySQL)
	if err != nil {
		t.Fatal(err)
	}
	dc.DBName = env.Database(services.IdempotencyDB, extra...)
	db, err := sql.Open("mysql", dc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// redisClient is a client of the test's Redis, the namespace's lab keys
// deleted.
func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: cfg(t).Redis})
	if err := rc.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis: %v", err)
	}
	t.Cleanup(func() { rc.Close() })
	keys, _ := rc.Keys(context.Background(), services.Names{NS: nsOf(t)}.RedisKey("lab:*")).Result()
	if len(keys) > 0 {
		rc.Del(context.Background(), keys...)
	}
	return rc
}

// lockedBuffer collects a worker's output lines from another goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// newConsumer opens a consumer in this process, the way Main does.
func newConsumer(t *testing.T, s consumer.Strategy, name string, effect consumer.Effect) (*consumer.Consumer, *lockedBuffer) {
	t.Helper()
	c, closeAll, err := consumer.Open(context.Background(), cfg(t), consumer.Options{
		Strategy: s, Consumer: name, Effect: effect, DB: services.IdempotencyDB, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAll)
	out := &lockedBuffer{}
	in, _ := io.Pipe() // never closed: the points never exit the test
	c.P = worker.NewParent(in, out, nil, func() {})
	return c, out
}

func msg(ev, key string, user, amount int64) consumer.Message {
	return consumer.Message{EventID: ev, BusinessKey: key, UserID: user, Amount: amount}
}

func handle(t *testing.T, c *consumer.Consumer, m consumer.Message) consumer.Result {
	t.Helper()
	res, err := c.Handle(context.Background(), m, nil)
	if err != nil {
		t.Fatalf("handle %s: %v", m, err)
	}
	return res
}

func points(t *testing.T, db *sql.DB, user int64) int64 {
	t.Helper()
	var p int64
	if err := db.QueryRow("SELECT points FROM points_account WHERE user_id=?", user).Scan(&p); err != nil {
		t.Fatalf("points of user %d: %v", user, err)
	}
	return p
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// spawn starts `lab worker consumer` as a real process, like a lesson does.
func spawn(t *testing.T, name string, pauseAt []string, args ...string) *worker.Process {
	t.Helper()
	p, err := worker.Start(worker.Spec{Binary: labtest.Lab(t), Kind: "consumer", Name: name, PauseAt: pauseAt,
		Args: args, Env: cfg(t).Env()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill() })
	return p
}

func waitExit(t *testing.T, p *worker.Process) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code, err := p.WaitExit(ctx)
	if err != nil {
		t.Fatalf("%v; output:\n%s", err, strings.Join(p.Output(), "\n"))
	}
	return code
}

func waitPaused(t *testing.T, p *worker.Process, point string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := p.WaitPaused(ctx, point); err != nil {
		t.Fatalf("%v; output:\n%s", err, strings.Join(p.Output(), "\n"))
	}
}

func output(p *worker.Process) string { return strings.Join(p.Output(), "\n") }

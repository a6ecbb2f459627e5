package consumer_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"github.com/rmlab/lab/consumer"
	"github.com/rmlab/lab/services"
	labsql "github.com/rmlab/lab/sql"
	"github.com/rmlab/lab/worker"
)

// ns keeps these tests' databases, queues and keys apart from lessons and
// colleagues on the same servers.
const ns = "idemtest"

var labBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "idemtestbin")
	if err != nil {
		panic(err)
	}
	labBinary = filepath.Join(dir, "lab")
	if out, err := exec.Command("go", "build", "-o", labBinary, "../cmd/lab").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build lab: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func cfg() services.Config { return services.Config{Namespace: ns}.FromEnv() }

// resetDB recreates blog_idempotency_lab_idemtest from the lab's own schema
// (plus the given extra sql/ files) and returns a pool on it.
func resetDB(t *testing.T, extra ...string) *sql.DB {
	t.Helper()
	ctx := context.Background()
	c := cfg()
	root, err := sql.Open("mysql", c.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	names := services.Names{NS: ns}
	name := names.Name(services.IdempotencyDB)
	if _, err := services.DropOwned(ctx, root, name); err != nil {
		t.Fatal(err)
	}
	conn, err := root.Conn(ctx)
	if err != nil {
		t.Fatalf("MySQL: %v", err)
	}
	defer conn.Close()
	for _, f := range append([]string{"idempotency/schema.sql"}, extra...) {
		text, err := labsql.File(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range labsql.Split(text) {
			if _, err := conn.ExecContext(ctx, names.SQL(st)); err != nil {
				t.Fatalf("%s: %v", st, err)
			}
		}
	}
	if err := services.Mark(ctx, root, name); err != nil {
		t.Fatal(err)
	}
	dc, err := gomysql.ParseDSN(c.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	dc.DBName = name
	db, err := sql.Open("mysql", dc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: cfg().Redis})
	if err := rc.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis: %v", err)
	}
	t.Cleanup(func() { rc.Close() })
	keys, _ := rc.Keys(context.Background(), services.Names{NS: ns}.RedisKey("lab:*")).Result()
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
	c, closeAll, err := consumer.Open(context.Background(), cfg(), consumer.Options{
		Strategy: s, Consumer: name, Effect: effect, DB: services.IdempotencyDB, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAll)
	out := &lockedBuffer{}
	in, _ := io.Pipe() // never closed: the points never exit the test
	c.P = worker.NewPoints(in, out, nil, func() {})
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
	p, err := worker.Start(worker.Spec{Binary: labBinary, Kind: "consumer", Name: name, PauseAt: pauseAt,
		Args: args, Env: cfg().Env()})
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

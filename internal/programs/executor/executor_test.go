package executor_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/programs/executor"
	"github.com/rmlab/lab/internal/programs/provider"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// resetDB creates blog_idempotency_lab_NS, in a namespace of the test's own,
// with the sms_task table and two queued tasks.
func resetDB(t *testing.T) *sql.DB {
	t.Helper()
	env := labtest.Connect(t, labtest.MySQL)
	dc, err := gomysql.ParseDSN(env.Config().MySQL)
	if err != nil {
		t.Fatal(err)
	}
	dc.DBName = env.Database(services.IdempotencyDB, "idempotency/sms_task.sql")
	db, err := sql.Open("mysql", dc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec("INSERT INTO sms_task (task_id,user_id,body,status) VALUES" +
		"('sms-notify:order:42:paid',7,'paid 42','NEW'),('sms-notify:order:43:paid',8,'paid 43','NEW')"); err != nil {
		t.Fatal(err)
	}
	return db
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
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

func newExecutor(t *testing.T, db *sql.DB, base string, noKey bool, pauseAt ...string) (*executor.Executor, *lockedBuffer) {
	out := &lockedBuffer{}
	in, _ := io.Pipe()
	return &executor.Executor{DB: db, DBName: "test", Provider: provider.Client{Base: base}, NoKey: noKey,
		P: worker.NewParent(in, out, pauseAt, func() {})}, out
}

func TestExecutorSendsEveryNewTaskAndRecordsItSent(t *testing.T) {
	db := resetDB(t)
	s := provider.NewServer()
	ts := httptest.NewServer(s)
	defer ts.Close()
	e, _ := newExecutor(t, db, ts.URL, false)
	n, err := e.Run(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("sent %d, %v", n, err)
	}
	var left int
	if err := db.QueryRow("SELECT COUNT(*) FROM sms_task WHERE status<>'SENT' OR provider_ref IS NULL OR attempts<>1").Scan(&left); err != nil {
		t.Fatal(err) // a failed count read as 0 would pass
	}
	if left != 0 || s.Stats(0).Sent != 2 {
		t.Fatalf("%d tasks not recorded, provider sent %d", left, s.Stats(0).Sent)
	}
}

// dieAfterCall stands in for a crash between the call and the record: the
// executor stops at after-call and never records SENT.
func dieAfterCall(t *testing.T, db *sql.DB, base string, noKey bool) {
	t.Helper()
	e, out := newExecutor(t, db, base, noKey, "after-call")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := e.Run(ctx); done <- err }()
	for !strings.Contains(out.String(), "@paused after-call") {
		select {
		case err := <-done:
			t.Fatalf("executor ended before after-call: %v\n%s", err, out.String())
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
}

func TestARetryAfterDyingBetweenCallAndRecordSendsOnceWithTheKey(t *testing.T) {
	for _, c := range []struct {
		noKey bool
		want  int
	}{{false, 1}, {true, 2}} {
		db := resetDB(t)
		if _, err := db.Exec("DELETE FROM sms_task WHERE user_id=8"); err != nil {
			t.Fatal(err)
		}
		s := provider.NewServer()
		ts := httptest.NewServer(s)
		dieAfterCall(t, db, ts.URL, c.noKey)
		var status string
		var attempts int
		if err := db.QueryRow("SELECT status, attempts FROM sms_task").Scan(&status, &attempts); err != nil {
			t.Fatal(err)
		}
		if status != "NEW" || attempts != 1 {
			t.Fatalf("after the crash: %s, %d attempts", status, attempts)
		}
		e, _ := newExecutor(t, db, ts.URL, c.noKey)
		if _, err := e.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := s.Stats(7).Sent; got != c.want {
			t.Errorf("no-key=%t: user 7 received %d SMS, want %d", c.noKey, got, c.want)
		}
		ts.Close()
	}
}

func TestATaskStaysNewWhenTheProviderIsDown(t *testing.T) {
	db := resetDB(t)
	e, _ := newExecutor(t, db, "http://127.0.0.1:1", false)
	if _, err := e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "stays NEW") {
		t.Fatalf("err %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM sms_task WHERE status='NEW'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d NEW tasks, want 2", n)
	}
}

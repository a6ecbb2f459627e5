package labtest

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/services"
)

// Spy is a MySQL login holding PROCESS and nothing else, reading every
// other session's statement in the process list as fast as it can while a
// test runs: what any login with PROCESS would read.
type Spy struct {
	mu   sync.Mutex
	seen []string
	set  map[string]bool
	stop chan struct{}
	done chan struct{}
}

// StartSpy makes the spy's login in the test's namespace and starts it
// reading; it stops and its login is dropped when the test ends.
func StartSpy(t testing.TB) *Spy {
	t.Helper()
	env := Of(t, MySQL)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	host, err := services.ClientHost(ctx, env.Svc.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	name := services.LabUserPrefix(env.NS) + "spy"
	account := fmt.Sprintf("'%s'@'%s'", name, host)
	for _, st := range []string{"DROP USER IF EXISTS " + account, "CREATE USER " + account, "GRANT PROCESS ON *.* TO " + account} {
		if _, err := env.Svc.MySQL.ExecContext(ctx, st); err != nil {
			t.Fatalf("the spy's login: %s: %v", st, err)
		}
	}
	t.Cleanup(func() { env.Svc.MySQL.Exec("DROP USER IF EXISTS " + account) })
	pw, err := services.SetPassword(ctx, env.Svc.MySQL, account)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := gomysql.ParseDSN(env.Svc.Config.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	dc.User, dc.Passwd = name, pw
	db, err := services.Open(ctx, dc.FormatDSN(), "")
	if err != nil {
		t.Fatalf("log in as the spy: %v", err)
	}
	db.SetMaxOpenConns(1)
	s := &Spy{set: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.read(db)
	t.Cleanup(func() { s.Stop(); db.Close() })
	return s
}

func (s *Spy) read(db *sql.DB) {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		rows, err := db.Query("SELECT INFO FROM information_schema.PROCESSLIST WHERE INFO IS NOT NULL AND ID <> CONNECTION_ID()")
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for rows.Next() {
			var info string
			if rows.Scan(&info) == nil {
				s.mu.Lock()
				if !s.set[info] {
					s.set[info] = true
					s.seen = append(s.seen, info)
				}
				s.mu.Unlock()
			}
		}
		rows.Close()
	}
}

// Stop ends the reading (once).
func (s *Spy) Stop() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
}

// Seen is every distinct statement the spy read, in the order it first
// read them.
func (s *Spy) Seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// Saw waits up to d for a statement holding every one of parts, and
// returns it.
func (s *Spy) Saw(d time.Duration, parts ...string) (string, bool) {
	end := time.Now().Add(d)
	for {
		for _, st := range s.Seen() {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(st, p)
			}
			if all {
				return st, true
			}
		}
		if time.Now().After(end) {
			return "", false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// HoldLogins holds the server's table of logins locked, so a statement
// that makes or changes a login waits in the process list (where a spy
// reads it) until release.
func HoldLogins(t testing.TB) (release func()) {
	t.Helper()
	env := Of(t, MySQL)
	ctx := context.Background()
	c, err := env.Svc.MySQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	c.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v)
	table := "mysql.user" // MySQL: the logins' table
	if strings.Contains(strings.ToLower(v), "mariadb") {
		table = "mysql.global_priv" // MariaDB 10.4+: mysql.user is a view of it
	}
	if _, err := c.ExecContext(ctx, "LOCK TABLES "+table+" WRITE"); err != nil {
		c.Close()
		t.Fatalf("hold the logins' table %s: %v", table, err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			c.ExecContext(ctx, "UNLOCK TABLES")
			c.Close()
		})
	}
	t.Cleanup(release)
	return release
}

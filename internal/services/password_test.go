package services_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

// A login holding only PROCESS reads the statement that gives a login its
// password, held in the process list behind a lock on the logins' table
// for as long as the spy needs: it finds the statement, and not the
// password, which still logs in.
func TestAPasswordTheLabSetsNeverShowsInTheProcessList(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL)
	ctx := context.Background()
	host, err := services.ClientHost(ctx, env.Svc.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	name := services.LabUserPrefix(env.NS) + "c1"
	account := fmt.Sprintf("'%s'@'%s'", name, host)
	if _, err := env.Svc.MySQL.ExecContext(ctx, "CREATE USER "+account); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Svc.MySQL.Exec("DROP USER IF EXISTS " + account) })
	spy := labtest.StartSpy(t)
	release := labtest.HoldLogins(t)
	type res struct {
		pw  string
		err error
	}
	done := make(chan res, 1)
	go func() {
		pw, err := services.SetPassword(ctx, env.Svc.MySQL, account)
		done <- res{pw, err}
	}()
	held, ok := spy.Saw(10*time.Second, "ALTER USER", name)
	release()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !ok {
		t.Fatalf("the spy never read the statement that set %s's password (it read %q)", name, spy.Seen())
	}
	spy.Stop()
	for _, st := range spy.Seen() {
		if strings.Contains(st, r.pw) {
			t.Fatalf("a login with PROCESS read the password in %q", st)
		}
	}
	dc, _ := gomysql.ParseDSN(env.Svc.Config.MySQL)
	dc.User, dc.Passwd = name, r.pw
	db, err := services.Open(ctx, dc.FormatDSN(), "")
	if err != nil {
		t.Fatalf("the password the lab set (held statement %q) does not log in: %v", held, err)
	}
	db.Close()
}

// Every statement of the lab's that gives a login a password goes through
// SetPassword: no other Go file of the lab writes IDENTIFIED BY or
// IDENTIFIED WITH, in a string or out of one, but the lab's own server's
// --init-file (dbnode.go), which the server runs before it takes a
// connection: no session exists that could read it.
func TestEveryLoginTheLabMakesGetsItsPasswordThroughSetPassword(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	identified := regexp.MustCompile(`(?i)\bIDENTIFIED\s+(BY|WITH|VIA)\b`)
	var found []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || filepath.Base(p) == "password.go" ||
			strings.HasSuffix(p, filepath.Join("internal", "dbnode", "dbnode.go")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if identified.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				rel, _ := filepath.Rel(root, p)
				found = append(found, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if len(found) > 0 {
		t.Fatalf("a login's password set outside services.SetPassword (where a login with PROCESS could read it):\n%s", strings.Join(found, "\n"))
	}
}

// A participant's login holds its two databases and nothing server wide,
// even when an account of its name already held PROCESS (as one an
// earlier lab made did).
func TestAParticipantsLoginHoldsNoGlobalPrivilegeEvenWhereItsNameHeldOne(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL)
	ctx := context.Background()
	host, err := services.ClientHost(ctx, env.Svc.MySQL)
	if err != nil {
		t.Fatal(err)
	}
	account := fmt.Sprintf("'%s'@'%s'", services.ParticipantUser(env.NS), host)
	t.Cleanup(func() { services.DropLabUsers(context.Background(), env.Svc.MySQL, env.NS) })
	for _, st := range []string{"CREATE USER " + account, "GRANT PROCESS ON *.* TO " + account} {
		if _, err := env.Svc.MySQL.ExecContext(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := services.KeptToItsDatabases(ctx, env.Svc.MySQL, account); err == nil || !strings.Contains(err.Error(), "PROCESS") {
		t.Fatalf("an account holding PROCESS passed the check: %v", err)
	}
	if _, err := services.MakeParticipantUser(ctx, env.Svc.MySQL, env.Svc.Config.MySQL, env.NS, 10); err != nil {
		t.Fatal(err)
	}
	g, err := services.Grants(ctx, env.Svc.MySQL, account)
	if err != nil {
		t.Fatal(err)
	}
	if wide := services.BeyondOwnDatabases(g); len(wide) > 0 || len(g) < 3 {
		t.Fatalf("the participant's grants: %q (beyond its databases: %q)", g, wide)
	}
}

func TestGrantsBeyondADatabaseAreNamed(t *testing.T) {
	for _, c := range []struct {
		grant string
		wide  bool
	}{
		{"GRANT USAGE ON *.* TO `u`@`h` IDENTIFIED BY PASSWORD '*AB'", false},
		{"GRANT ALL PRIVILEGES ON `blog\\_x`.* TO `u`@`h`", false},
		{"GRANT SELECT, INSERT ON `db`.`t` TO 'u'@'h'", false},
		{"GRANT PROCESS ON *.* TO `u`@`h`", true},
		{"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `u`@`h`", true},
		{"GRANT BINLOG_ADMIN ON *.* TO `u`@`h`", true},
		{"GRANT PROXY ON ''@'%' TO 'u'@'h'", true},
		{"GRANT `admin` TO `u`@`h`", true},
	} {
		if got := len(services.BeyondOwnDatabases([]string{c.grant})) > 0; got != c.wide {
			t.Errorf("%s: beyond its databases %v, want %v", c.grant, got, c.wide)
		}
	}
}

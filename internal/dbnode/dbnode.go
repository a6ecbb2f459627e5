// Package dbnode starts a MySQL-compatible server of the lab's own, with a
// row-based binary log, for the lessons that read one (the outbox relay
// that tails the log) where the configured server writes none: the
// machine's server is never reconfigured. It is a node as package node's
// RabbitMQ nodes are: a free loopback port, a data folder of its own under
// the lab's cache, dead with the lab (Pdeathsig), its folder removed when
// it stops, and what a lab killed before it could clean up swept by the
// next one.
package dbnode

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/password"

	"github.com/rmlab/lab/internal/node"
)

// Node is one running server.
type Node struct {
	Port    int
	Flavor  string // "mariadb" or "mysql"
	Version string
	Took    time.Duration // install and start

	// password is root's, made for this server when it starts: a program
	// of the learner's runs as the same system user and could otherwise
	// log in as root with none and rewrite what a grader reads.
	password string
	dir      string
	cmd      *exec.Cmd
	lock     *os.File
	done     chan struct{}
}

// Dir is where the lab keeps its servers' folders: LAB_MYSQL_NODES_DIR, or
// $XDG_CACHE_HOME/rmlab/mysql (default ~/.cache/rmlab/mysql).
func Dir() (string, error) {
	if d := os.Getenv("LAB_MYSQL_NODES_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the lab's own MySQL server: %w (set XDG_CACHE_HOME)", err)
	}
	return filepath.Join(d, "rmlab", "mysql"), nil
}

// server is a server binary and how to make its data folder.
type server struct {
	bin, install, flavor string
}

// find looks for mariadbd and mariadb-install-db, then mysqld (which
// initialises its own folder). LAB_MYSQLD names the server binary;
// LAB_OWN_MYSQL=off says the lab must start none.
func find() (server, error) {
	if v := os.Getenv("LAB_OWN_MYSQL"); v == "off" || v == "0" || v == "false" {
		return server{}, fmt.Errorf("LAB_OWN_MYSQL=%s: the lab starts no MySQL server of its own here", v)
	}
	cands := []string{"/usr/sbin/mariadbd", "/usr/sbin/mysqld"}
	if b := os.Getenv("LAB_MYSQLD"); b != "" {
		cands = []string{b}
	}
	for _, b := range cands {
		if fi, err := os.Stat(b); err != nil || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if strings.Contains(filepath.Base(b), "mariadb") {
			inst, err := exec.LookPath("mariadb-install-db")
			if err != nil {
				return server{}, fmt.Errorf("%s is here but mariadb-install-db is not on PATH (install mariadb-server)", b)
			}
			return server{b, inst, "mariadb"}, nil
		}
		return server{b, "", "mysql"}, nil
	}
	return server{}, fmt.Errorf("no MySQL-compatible server binary at %s (install mariadb-server or mysql-server, or set LAB_MYSQLD)", strings.Join(cands, " or "))
}

// Server says which server the lab would start, or why it cannot.
func Server() (string, error) {
	s, err := find()
	return s.bin, err
}

// Start makes a data folder, starts the server on a free loopback port with
// a row-based binary log, and waits until it answers.
func Start(ctx context.Context) (*Node, error) {
	s, err := find()
	if err != nil {
		return nil, err
	}
	base, err := Dir()
	if err != nil {
		return nil, err
	}
	node.Sweep(base) // what a lab that died left here, as for RabbitMQ nodes
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("lab-owned MySQL server: %w", err)
	}
	dir, err := os.MkdirTemp(base, "db-")
	if err != nil {
		return nil, fmt.Errorf("lab-owned MySQL server: %w", err)
	}
	// The lock is taken under another name and then renamed: another
	// lab's node.Sweep that opened "lock" between its creation and the
	// flock would take it and remove this folder (two challenge runs
	// starting at once lost their data folder so).
	lock, err := os.OpenFile(filepath.Join(dir, "lock.new"), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err == nil {
		err = os.Rename(filepath.Join(dir, "lock.new"), filepath.Join(dir, "lock"))
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("lab-owned MySQL server: lock %s: %w", dir, err)
	}
	n := &Node{Flavor: s.flavor, dir: dir, lock: lock, done: make(chan struct{})}
	t0 := time.Now()
	if err := n.start(ctx, s); err != nil {
		n.Stop()
		return nil, err
	}
	n.Took = time.Since(t0)
	return n, nil
}

func (n *Node) start(ctx context.Context, s server) error {
	data := filepath.Join(n.dir, "data")
	// A temporary folder of its own: two servers bootstrapping at once in
	// the shared /tmp collided on their temporary tables' names
	// (mariadb-install-db: "Unknown table 'mysql.tmp_user_sys'").
	tmp := filepath.Join(n.dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return fmt.Errorf("lab-owned MySQL server: %w", err)
	}
	asRoot := os.Geteuid() == 0
	var install *exec.Cmd
	if s.flavor == "mariadb" {
		args := []string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db", "--tmpdir=" + tmp}
		if asRoot {
			args = append(args, "--user=root")
		}
		install = exec.CommandContext(ctx, s.install, args...)
	} else {
		args := []string{"--no-defaults", "--initialize-insecure", "--datadir=" + data, "--tmpdir=" + tmp}
		if asRoot {
			args = append(args, "--user=root")
		}
		install = exec.CommandContext(ctx, s.bin, args...)
	}
	if out, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("lab-owned MySQL server: initialise %s with %s: %v: %s", data, filepath.Base(install.Path), err, tail(out))
	}
	// Root's password is set by the server itself as it starts
	// (--init-file), before it takes a connection, and every other root
	// account (the socket's, ::1's, the host name's) is dropped: no login
	// without the password, and none in a statement another session
	// could read. MariaDB takes the hash; MySQL 9 has no
	// mysql_native_password, so its file holds the password, readable by
	// this user only and removed once the server answers.
	n.password = password.New()
	init := filepath.Join(n.dir, "init.sql")
	if err := os.WriteFile(init, []byte(lockRoot(s.flavor, n.password)), 0o600); err != nil {
		return fmt.Errorf("lab-owned MySQL server: %w", err)
	}
	defer os.Remove(init)
	ports, err := node.FreePorts(1)
	if err != nil {
		return fmt.Errorf("lab-owned MySQL server: %w", err)
	}
	n.Port = ports[0]
	args := []string{"--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--port=" + strconv.Itoa(n.Port), "--bind-address=127.0.0.1",
		"--socket=" + filepath.Join(n.dir, "sock"), "--pid-file=" + filepath.Join(n.dir, "pid"),
		"--log-bin=binlog", "--binlog-format=ROW", "--server-id=1", "--skip-name-resolve",
		"--performance-schema=OFF", "--innodb-buffer-pool-size=64M", "--max-connections=1000",
		"--log-error=" + filepath.Join(n.dir, "error.log"), "--init-file=" + init}
	if s.flavor == "mysql" {
		args = append(args, "--mysqlx=OFF", "--secure-file-priv=")
	}
	if asRoot {
		args = append(args, "--user=root")
	}
	n.cmd = exec.Command(s.bin, args...)
	n.cmd.Env = append(os.Environ(), node.Marker(n.dir)) // node.Sweep finds it by this if the lab dies
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := n.cmd.Start(); err != nil {
		return fmt.Errorf("lab-owned MySQL server: start %s: %w", s.bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- n.cmd.Wait(); close(n.done) }()
	db, err := sql.Open("mysql", n.DSN())
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := db.QueryRowContext(pctx, "SELECT VERSION()").Scan(&n.Version)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case e := <-exited:
			log, _ := os.ReadFile(filepath.Join(n.dir, "error.log"))
			return fmt.Errorf("lab-owned MySQL server %s exited while starting (%v): %s", s.bin, e, tail(log))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lab-owned MySQL server on 127.0.0.1:%d did not answer within 60s: %v", n.Port, err)
		}
	}
}

// DSN reaches the server as root, with the password made for it (it
// listens on loopback only, and its data is the lab's).
func (n *Node) DSN() string {
	c := mysql.NewConfig()
	c.User, c.Passwd, c.Net, c.Addr = "root", n.password, "tcp", "127.0.0.1:"+strconv.Itoa(n.Port)
	return c.FormatDSN()
}

// lockRoot is the init file that leaves root@127.0.0.1 as the one root,
// with password pw.
func lockRoot(flavor, pw string) string {
	host, _ := os.Hostname()
	host = strings.NewReplacer(`\`, "", "'", "").Replace(host)
	var b strings.Builder
	if flavor == "mariadb" {
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n")
		fmt.Fprintf(&b, "ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY PASSWORD '%s';\n", password.NativeHash(pw))
	} else {
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '%s';\nGRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n", pw)
		fmt.Fprintf(&b, "ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '%s';\n", pw)
	}
	for _, h := range []string{"localhost", "::1", host} {
		if h != "" && h != "127.0.0.1" {
			fmt.Fprintf(&b, "DROP USER IF EXISTS 'root'@'%s';\n", h)
		}
	}
	b.WriteString("DROP USER IF EXISTS ''@'localhost';\n")
	if host != "" {
		fmt.Fprintf(&b, "DROP USER IF EXISTS ''@'%s';\n", host)
	}
	return b.String()
}

// Socket is the server's Unix socket.
func (n *Node) Socket() string { return filepath.Join(n.dir, "sock") }

// Addr is host:port.
func (n *Node) Addr() string { return "127.0.0.1:" + strconv.Itoa(n.Port) }

// Stop ends the server (SIGTERM, then SIGKILL after 20 s) and removes its
// folder.
func (n *Node) Stop() error {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-n.done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
			<-n.done
		}
	}
	if n.lock != nil {
		n.lock.Close()
	}
	return os.RemoveAll(n.dir)
}

// tail is the end of a command's output, for an error message: its ERROR
// lines when it has some (mariadb-install-db ends with a page of advice).
func tail(b []byte) string {
	var errs []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "ERROR") {
			errs = append(errs, strings.TrimSpace(l))
		}
	}
	s := strings.TrimSpace(string(b))
	if len(errs) > 0 {
		s = strings.Join(errs, "; ")
	}
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}

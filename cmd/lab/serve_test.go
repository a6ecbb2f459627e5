package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/services"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestLabRoomResetEndsTheSessionCleansTheNamespaceAndForgetsTheProgress
// runs the real binaries: lab serve --room --broker-control rabbitmqctl, a
// participant over SSH who runs lesson 1's reset, then lab room --reset
// with no broker control of its own: the room remembers how its server
// made the participant's vhost, and the reset removes it with her logins.
func TestLabRoomResetEndsTheSessionCleansTheNamespaceAndForgetsTheProgress(t *testing.T) {
	env := labtest.Connect(t)
	rm, alice := env.NS, env.Derived("al") // the room and its participant
	addr := freePort(t)
	noControl := []string{"LAB_BROKER_CONTROL=", "LAB_MANAGEMENT_URL=http://127.0.0.1:1/"}
	serve := exec.Command(labBin(t), "serve", "--listen", addr, "--room", rm, "--seats", "2", "--broker-control", "rabbitmqctl")
	serve.Env = append(append(os.Environ(), noControl...), "LAB_WORKSHOP_PASSWORD=pw-reset", "XDG_STATE_HOME="+t.TempDir())
	var serveOut syncBuf
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Process.Kill()
		serve.Wait()
	})
	var c *gossh.Client
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if c, err = gossh.Dial("tcp", addr, &gossh.ClientConfig{User: alice, Auth: []gossh.AuthMethod{gossh.Password("pw-reset")},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 2 * time.Second}); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("lab serve never answered: %v\n%s", err, serveOut.String())
	}
	defer c.Close()
	s, _ := c.NewSession()
	var screen syncBuf
	s.Stdout, s.Stderr = &screen, &screen
	in, _ := s.StdinPipe()
	s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{})
	s.Shell()
	done := make(chan struct{})
	go func() { s.Wait(); close(done) }()
	db := env.Svc.MySQL
	aliceDB := services.Names{NS: alice}.Name(services.IdempotencyDB)
	exists := func() bool {
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", aliceDB).Scan(&n); err != nil {
			t.Fatalf("is %s there: %v", aliceDB, err) // an error is no answer, not "gone"
		}
		return n == 1
	}
	for deadline := time.Now().Add(20 * time.Second); !exists(); time.Sleep(200 * time.Millisecond) {
		if !strings.Contains(screen.String(), "reliable-messaging lab") {
			continue
		}
		in.Write([]byte("\r"))
		time.Sleep(time.Second)
		if time.Now().After(deadline) {
			t.Fatalf("the participant's reset created no database:\n%s", screen.String())
		}
	}
	if ok, _ := broker.VhostExists(context.Background(), env.Config().AMQP, services.ParticipantVhost(alice)); !ok {
		t.Fatalf("the participant has no vhost of her own:\n%s", serveOut.String())
	}
	reset := exec.Command(labBin(t), "room", "--room", rm, "--reset", alice)
	reset.Env = append(os.Environ(), noControl...)
	o, err := reset.CombinedOutput()
	if err != nil || !strings.Contains(string(o), alice+" starts afresh") {
		t.Fatalf("lab room --reset: %v\n%s", err, o)
	}
	if ok, err := broker.VhostExists(context.Background(), env.Config().AMQP, services.ParticipantVhost(alice)); ok || err != nil {
		t.Errorf("lab room --reset with no broker control of its own left the vhost %s its server made (%v):\n%s", services.ParticipantVhost(alice), err, o)
	}
	var users int
	if err := db.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User=?", services.ParticipantUser(alice)).Scan(&users); err != nil || users != 0 {
		t.Errorf("lab room --reset left the participant's MySQL user (%d, %v)", users, err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the participant's session did not end")
	}
	if exists() {
		t.Errorf("%s is still there", aliceDB)
	}
	out, _, _ := runLab(t, "room", "--room", rm)
	if strings.Contains(out, alice) {
		t.Errorf("the room still lists %s:\n%s", alice, out)
	}
	// A lesson nobody has is refused to the instructor, not sent.
	if _, errOut, code := runLab(t, "room", "--room", rm, "--goto", "999"); code != 2 || !strings.Contains(errOut, "no such lesson") {
		t.Errorf("--goto 999: exit %d: %s", code, errOut)
	}
	// The room's log has the login, the reset and the end, from both sides.
	out, _, _ = runLab(t, "room", "--room", rm, "--log")
	for _, want := range []string{alice + " from 127.0.0.1 logged in", "lab room: reset " + alice, "session of " + alice + " from 127.0.0.1 ended: the instructor ended your session"} {
		if !strings.Contains(out, want) {
			t.Errorf("lab room --log lacks %q:\n%s", want, out)
		}
	}
}

// startServe runs a real `lab serve` process in room name on a free port.
func startServe(t *testing.T, name, state string) string {
	t.Helper()
	addr, _ := runServe(t, []string{"LAB_WORKSHOP_PASSWORD=pw-two", "XDG_STATE_HOME=" + state}, "--room", name, "--seats", "2")
	return addr
}

// runServe runs `lab serve --listen ADDR args…` on a free port with env
// added, killed when the test ends; its output is kept.
func runServe(t *testing.T, env []string, args ...string) (string, *syncBuf) {
	t.Helper()
	addr := freePort(t)
	// --share-logins: where this machine cannot give participants logins
	// of their own, these tests are about something else.
	serve := exec.Command(labBin(t), append([]string{"serve", "--listen", addr, "--share-logins"}, args...)...)
	serve.Env = append(os.Environ(), env...)
	out := &syncBuf{}
	serve.Stdout, serve.Stderr = out, out
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	return addr, out
}

// sshEnter logs in as user and presses enter once the screen is up.
func sshEnter(t *testing.T, addr, user string) *gossh.Client {
	t.Helper()
	var c *gossh.Client
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if c, err = gossh.Dial("tcp", addr, &gossh.ClientConfig{User: user, Auth: []gossh.AuthMethod{gossh.Password("pw-two")},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 2 * time.Second}); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("lab serve at %s never answered: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	s, _ := c.NewSession()
	var screen syncBuf
	s.Stdout, s.Stderr = &screen, &screen
	in, _ := s.StdinPipe()
	s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{})
	s.Shell()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(screen.String(), "reliable-messaging lab"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no screen", user)
		}
	}
	in.Write([]byte("\r"))
	return c
}

// TestTwoLabServeProcessesOnOneMySQLAreOneRoom: two real lab serve
// processes on different ports, one room; lab room lists the participants
// of both, each at their server.
func TestTwoLabServeProcessesOnOneMySQLAreOneRoom(t *testing.T) {
	env := labtest.Connect(t)
	rm, ann, ben := env.NS, env.Derived("an"), env.Derived("be")
	a := startServe(t, rm, t.TempDir())
	b := startServe(t, rm, t.TempDir())
	sshEnter(t, a, ann)
	sshEnter(t, b, ben)
	var out string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		out, _, _ = runLab(t, "room", "--room", rm)
		if strings.Contains(out, "2 participant(s)") && strings.Contains(out, ann) && strings.Contains(out, ben) &&
			strings.Contains(out, a) && strings.Contains(out, b) {
			return
		}
	}
	t.Fatalf("lab room shows:\n%s\nwant %s at %s and %s at %s", out, ann, a, ben, b)
}

// The room knows the lessons its servers serve: lab room --goto takes a
// lesson of a server's --lessons folder from an instructor whose own lab
// has only the built-in ones, and refuses one no server has. A command to
// a name the room has never seen is refused (exit 1), not "sent".
func TestTheRoomTakesItsServersLessonsAndRefusesANameItHasNotSeen(t *testing.T) {
	env := labtest.Connect(t)
	rm, ann := env.NS, env.Derived("an")
	lessons := t.TempDir()
	src, err := os.ReadFile("testdata/long-worker.md")
	if err != nil {
		t.Fatal(err)
	}
	own := strings.Replace(strings.Replace(string(src), "id: long-worker", "id: own-102", 1), "number: 1\n", "number: 102\n", 1)
	if err := os.WriteFile(filepath.Join(lessons, "102-own.md"), []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, _ := runServe(t, []string{"LAB_WORKSHOP_PASSWORD=pw-two", "XDG_STATE_HOME=" + t.TempDir()}, "--room", rm, "--seats", "2", "--lessons", lessons)
	sshEnter(t, addr, ann)
	var out, errOut string
	var code int
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if out, errOut, code = runLab(t, "room", "--room", rm, "--goto", "102"); code == 0 {
			break
		}
	}
	if code != 0 || !strings.Contains(out, "sent goto 102") {
		t.Errorf("--goto 102 (a lesson of the server's folder): exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runLab(t, "room", "--room", rm, "--goto", "999"); code != 2 || !strings.Contains(errOut, "no such lesson") {
		t.Errorf("--goto 999: exit %d: %s", code, errOut)
	}
	for _, args := range [][]string{{"--say", "hello", "--to", "nobodyhere"}, {"--goto", "1", "--to", "nobodyhere"}, {"--end", "nobodyhere"}} {
		out, errOut, code := runLab(t, append([]string{"room", "--room", rm}, args...)...)
		if code != 1 || !strings.Contains(errOut, "no participant of that name") || !strings.Contains(errOut, ann) || strings.Contains(out, "sent") {
			t.Errorf("lab room %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	if out, errOut, code := runLab(t, "room", "--room", rm, "--say", "hello", "--to", ann); code != 0 || !strings.Contains(out, "sent say hello to "+ann) {
		t.Errorf("--say to a participant of the room: exit %d\n%s%s", code, out, errOut)
	}
}

// lab serve with nothing but --listen and the password's variable starts on
// a stock server (it takes the seats MySQL's free connections hold, at
// most 20, and says so), logs each login and refusal on stderr, and the
// worker processes a participant's lesson starts never see the workshop
// password in their environment.
func TestServeStartsWithItsDefaultsAndWorkersNeverSeeThePassword(t *testing.T) {
	env := labtest.Connect(t)
	alice := env.Derived("pw")
	addr := freePort(t)
	const secretPW = "s3cret-workshop-pw"
	serve := exec.Command(labBin(t), "serve", "--listen", addr, "--password-env", "LAB_TEST_WS_PW", "--share-logins",
		"--lessons", "../../ui/testdata/worker-lessons")
	serve.Env = append(os.Environ(), "LAB_TEST_WS_PW="+secretPW, "XDG_STATE_HOME="+t.TempDir())
	var out syncBuf
	serve.Stdout, serve.Stderr = &out, &out
	// What an instructor's shell may hand lab serve beyond 0, 1 and 2: a
	// pipe (a password fed through one) and a log file open for writing.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	logFile, err := os.Create(filepath.Join(t.TempDir(), "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	serve.ExtraFiles = []*os.File{pr, logFile}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	pipeIno, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", pr.Fd()))
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	dial := func(pw string) (*gossh.Client, error) {
		return gossh.Dial("tcp", addr, &gossh.ClientConfig{User: alice, Auth: []gossh.AuthMethod{gossh.Password(pw)},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 2 * time.Second})
	}
	var c *gossh.Client
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if c, err = dial(secretPW); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("lab serve never answered: %v\n%s", err, out.String())
	}
	defer c.Close()
	if !strings.Contains(out.String(), "seats: what MySQL's free connections hold") {
		t.Errorf("lab serve did not say how many seats it took:\n%s", out.String())
	}
	if _, err := dial("wrong"); err == nil {
		t.Fatal("a wrong password logged in")
	}
	s, _ := c.NewSession()
	var screen syncBuf
	s.Stdout, s.Stderr = &screen, &screen
	in, _ := s.StdinPipe()
	s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{})
	s.Shell()
	var workers []string
	for deadline := time.Now().Add(30 * time.Second); len(workers) == 0; time.Sleep(700 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no worker started:\n%s", screen.String())
		}
		if strings.Contains(screen.String(), "reliable-messaging lab") {
			in.Write([]byte("\r")) // reset, sql, spawn: the worker pauses mid-transaction
		}
		workers = pidsWith("LAB_NAMESPACE=" + alice)
	}
	for _, pid := range workers {
		b, err := os.ReadFile("/proc/" + pid + "/environ")
		if err != nil {
			continue // it ended meanwhile
		}
		if strings.Contains(string(b), secretPW) || strings.Contains(string(b), "LAB_TEST_WS_PW") {
			t.Errorf("worker %s has the workshop password in its environment", pid)
		}
		// Its descriptors: none of what lab serve was started with.
		fds, _ := os.ReadDir("/proc/" + pid + "/fd")
		var held []string
		for _, fd := range fds {
			to, err := os.Readlink("/proc/" + pid + "/fd/" + fd.Name())
			if err == nil && (to == pipeIno || to == logFile.Name()) {
				held = append(held, fd.Name()+" → "+to)
			}
		}
		if len(fds) == 0 {
			t.Errorf("worker %s: /proc/%s/fd lists nothing", pid, pid)
		}
		if len(held) > 0 {
			t.Errorf("worker %s holds what lab serve was started with: %s", pid, strings.Join(held, ", "))
		}
	}
	log := out.String()
	for _, want := range []string{"refused " + alice + " from 127.0.0.1: wrong password", alice + " from 127.0.0.1 logged in with the password"} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, secretPW) {
		t.Errorf("the log prints the password")
	}
	// Nor lab serve's own: os.Unsetenv left it in /proc/PID/environ.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", serve.Process.Pid)); err != nil || strings.Contains(string(b), secretPW) {
		t.Errorf("lab serve's /proc environ holds the password (%v)", err)
	}
	// SIGTERM is lab serve's: each session ends saying why, and it exits
	// only once every screen has closed (it used to exit as its listener
	// closed, before the participant was told why).
	serve.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- serve.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("lab serve after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("lab serve did not exit within 30 s of SIGTERM:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "lab serve: stopped: every session ended") {
		t.Errorf("lab serve exited without saying its sessions had ended:\n%s", out.String())
	}
	if !strings.Contains(screen.String(), "lab: the workshop server is shutting down") {
		t.Errorf("after SIGTERM the participant was not told why the session ended:\n%q", tailOf(screen.String()))
	}
	if w := pidsWith("LAB_NAMESPACE=" + alice); len(w) > 0 {
		t.Errorf("lab serve exited with the participant's workers still running: %v", w)
	}
}

func tailOf(s string) string { return s[max(0, len(s)-1500):] }

// --password-file reads the password from a file (or a descriptor); it is
// never in the process's environment, and a file with no password is a
// clear error.
func TestServeReadsThePasswordFromAFile(t *testing.T) {
	env := labtest.Connect(t)
	alice := env.Derived("pf")
	addr := freePort(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	os.WriteFile(file, []byte("from-a-file\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	if _, errOut, code := runLab(t, "serve", "--listen", addr, "--password-file", empty); code != 2 || !strings.Contains(errOut, "first line is empty") {
		t.Fatalf("an empty password file: exit %d\n%s", code, errOut)
	}
	serve := exec.Command(labBin(t), "serve", "--listen", addr, "--password-file", file, "--share-logins")
	serve.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	var out syncBuf
	serve.Stdout, serve.Stderr = &out, &out
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var c *gossh.Client
		c, err = gossh.Dial("tcp", addr, &gossh.ClientConfig{User: alice, Auth: []gossh.AuthMethod{gossh.Password("from-a-file")},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 2 * time.Second})
		if err == nil {
			c.Close()
			break
		}
	}
	if err != nil {
		t.Fatalf("the password from the file did not log in: %v\n%s", err, out.String())
	}
	if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", serve.Process.Pid)); strings.Contains(string(b), "from-a-file") {
		t.Error("lab serve's environment holds the password")
	}
}

// pidsWith lists the processes whose environment has kv.
func pidsWith(kv string) []string {
	dirs, _ := os.ReadDir("/proc")
	var out []string
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/environ")
		if err == nil && bytes.Contains(b, []byte(kv+"\x00")) {
			out = append(out, d.Name())
		}
	}
	return out
}

// Behind a published port (docker compose's LAB_SSH_PORT) the lab cannot
// see the port participants reach: --advertise names it, and the log line
// an instructor copies says it. A malformed one is refused at the start.
func TestServeSaysTheAdvertisedAddressParticipantsReach(t *testing.T) {
	labtest.Connect(t)
	if _, errOut, code := runLab(t, "serve", "--listen", freePort(t), "--advertise", "no-port"); code != 2 || !strings.Contains(errOut, "give HOST:PORT") {
		t.Fatalf("--advertise no-port: exit %d, want 2 saying HOST:PORT\n%s", code, errOut)
	}
	_, out := runServe(t, []string{"LAB_WORKSHOP_PASSWORD=pw-adv", "XDG_STATE_HOME=" + t.TempDir()}, "--advertise", "HOST:12222", "--seats", "1")
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(out.String(), "participants run"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lab serve did not say where participants connect:\n%s", out.String())
		}
	}
	if !strings.Contains(out.String(), "participants run: ssh -p 12222 NAME@HOST") {
		t.Errorf("the log does not name the advertised port:\n%s", out.String())
	}
}

// A class run as the workshop guide ends it, with the lab alone: lab
// serve (as the guide writes it) with a participant who ran a lesson's
// reset and whose workers left a Redis key, then lab room --drop as the
// guide writes it. The server ends by Ctrl-C (it removes the logins it
// made; --drop the rest) or dies (SIGKILL: --drop removes everything, the
// logins with the broker control the room remembers). Afterwards nothing
// of the room is left: no participant's MySQL user, vhost, RabbitMQ user,
// Redis user, database or Redis key, no room database.
func TestAClassEndedAsTheGuideWritesItLeavesNothingOfTheRoom(t *testing.T) {
	var serveLine, dropLine string
	for _, l := range shLines(t, "../../docs/workshop.md") {
		switch {
		case strings.HasPrefix(l.text, "lab serve ") && strings.Contains(l.text, "--broker-control"):
			serveLine = l.text
		case strings.Contains(l.text, "--drop"):
			dropLine = l.text
		}
	}
	if serveLine == "" || dropLine == "" {
		t.Fatalf("docs/workshop.md no longer ends a class with lab serve … --broker-control and lab room … --drop")
	}
	for _, end := range []struct {
		name string
		sig  os.Signal
	}{{"ctrl-c", os.Interrupt}, {"server-died", os.Kill}} {
		t.Run(end.name, func(t *testing.T) { classEndedAsTheGuideWritesIt(t, serveLine, dropLine, end.sig) })
	}
}

func classEndedAsTheGuideWritesIt(t *testing.T, serveLine, dropLine string, sig os.Signal) {
	env := labtest.Connect(t)
	rm, alice := env.NS, env.Derived("cl")
	addr := freePort(t)
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("pw-two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	as := func(line string) []string {
		w := words(line)[1:] // the lab itself is labBin
		for i, a := range w {
			a = strings.ReplaceAll(a, "monday", rm)
			a = strings.ReplaceAll(a, "0.0.0.0:2222", addr)
			w[i] = strings.ReplaceAll(a, "~/.workshop-password", pwFile)
		}
		return w
	}
	serve := exec.Command(labBin(t), as(serveLine)...)
	serve.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	var out syncBuf
	serve.Stdout, serve.Stderr = &out, &out
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	sshEnter(t, addr, alice) // lesson 1's first step: its reset makes her databases
	db := env.Svc.MySQL
	count := func(q string, args ...any) int {
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	theirs := "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN (?, ?, ?)"
	dbs := []any{services.Names{NS: alice}.Name(services.IdempotencyDB), services.Names{NS: alice}.Name(services.OutboxDB), room.DBName(rm)}
	for deadline := time.Now().Add(30 * time.Second); count(theirs, dbs...) < 2; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the participant's reset made no database:\n%s", out.String())
		}
	}
	ctx := context.Background()
	user := services.ParticipantUser(alice)
	brokerUser := func() bool {
		o, err := exec.Command("rabbitmqctl", "-q", "list_users", "--no-table-headers").Output()
		if err != nil {
			t.Fatalf("rabbitmqctl list_users: %v", err)
		}
		for _, l := range strings.Split(string(o), "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == user {
				return true
			}
		}
		return false
	}
	redisUser := func() bool {
		v, err := env.Svc.Redis.Do(ctx, "ACL", "GETUSER", user).Result()
		return err == nil && v != nil
	}
	if count("SELECT COUNT(*) FROM mysql.user WHERE User=?", user) != 1 {
		t.Fatalf("the participant has no MySQL user of their own:\n%s", out.String())
	}
	if ok, _ := broker.VhostExists(ctx, env.Config().AMQP, services.ParticipantVhost(alice)); !ok {
		t.Fatalf("the participant has no vhost of their own:\n%s", out.String())
	}
	if !brokerUser() || !redisUser() {
		t.Fatalf("the participant has no RabbitMQ user (%v) or Redis user (%v) of their own:\n%s", brokerUser(), redisUser(), out.String())
	}
	// A key as the participant's consumer leaves one (lesson 6's mark).
	key := services.Names{NS: alice}.RedisKey("lab:dedup:order-42")
	if err := env.Svc.Redis.Set(ctx, key, "1", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	serve.Process.Signal(sig)
	err := serve.Wait()
	if sig == os.Interrupt {
		if err != nil || !strings.Contains(out.String(), "removed the logins it made for 1 participant") {
			t.Fatalf("lab serve after Ctrl-C: %v\n%s", err, out.String())
		}
		if count("SELECT COUNT(*) FROM mysql.user WHERE User=?", user) != 0 || brokerUser() || redisUser() {
			t.Errorf("after Ctrl-C, lab serve left logins it made: MySQL %d, RabbitMQ %v, Redis %v",
				count("SELECT COUNT(*) FROM mysql.user WHERE User=?", user), brokerUser(), redisUser())
		}
	}
	if o, e, code := runLab(t, as(dropLine)...); code != 0 || !strings.Contains(o, "dropped room "+rm) {
		t.Fatalf("%s: exit %d\n%s%s", dropLine, code, o, e)
	}
	if n := count(theirs, dbs...); n != 0 {
		t.Errorf("%d of the room's databases are left", n)
	}
	if count("SELECT COUNT(*) FROM mysql.user WHERE User=?", user) != 0 {
		t.Errorf("the participant's MySQL user is left")
	}
	if ok, err := broker.VhostExists(ctx, env.Config().AMQP, services.ParticipantVhost(alice)); ok || err != nil {
		t.Errorf("the participant's vhost is left (%v)", err)
	}
	if brokerUser() {
		t.Errorf("the participant's RabbitMQ user %s is left", user)
	}
	if redisUser() {
		t.Errorf("the participant's Redis user %s is left", user)
	}
	if n, err := env.Svc.Redis.Exists(ctx, key).Result(); err != nil || n != 0 {
		t.Errorf("the participant's Redis key %s is left (%v)", key, err)
	}
}

// Where participants could only share the lab's own logins (no management
// API, no --broker-control: every participant's workers would get the
// broker's administrator), lab serve refuses to start, saying why and how
// to fix it; --share-logins accepts it.
func TestServeRefusesToHandOutTheLabsOwnLoginsUnlessTold(t *testing.T) {
	env := []string{"LAB_WORKSHOP_PASSWORD=pw", "XDG_STATE_HOME=" + t.TempDir(), "LAB_BROKER_CONTROL=", "LAB_MANAGEMENT_URL=http://127.0.0.1:1/"}
	cmd := exec.Command(labBin(t), "serve", "--listen", freePort(t))
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "would share the lab's own logins") ||
		!strings.Contains(string(out), "RabbitMQ") || !strings.Contains(string(out), "--share-logins") {
		t.Fatalf("lab serve with only the lab's own broker login to give: exit %d (%v)\n%s", code, err, out)
	}
	addr, log := runServe(t, env) // runServe passes --share-logins
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "participants run: ssh"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lab serve --share-logins at %s did not start:\n%s", addr, log.String())
		}
	}
	if !strings.Contains(log.String(), "WARNING") {
		t.Errorf("lab serve --share-logins does not warn that logins are shared:\n%s", log.String())
	}
}

// A Redis whose lab login cannot make users (no ACL: a Redis before 6, or
// a default user without the acl commands, as this private redis-server
// is started) would have every participant share one login, every key
// theirs: lab serve refuses, saying so and how to fix it.
func TestServeRefusesARedisWhereParticipantsWouldShareOneLogin(t *testing.T) {
	labtest.Needs(t, labtest.RedisServer)
	port := strings.TrimPrefix(freePort(t), "127.0.0.1:")
	rs := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--user", "default", "on", "nopass", "~*", "&*", "+@all", "-acl")
	if err := rs.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Process.Kill(); rs.Wait() })
	addr := "127.0.0.1:" + port
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test's redis-server on %s never answered", addr)
		}
	}
	// A lab serve that did not refuse would serve: 60 s is its answer.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, labBin(t), "serve", "--listen", freePort(t), "--broker-control", "rabbitmqctl", "--redis", addr)
	cmd.Env = append(os.Environ(), "LAB_WORKSHOP_PASSWORD=pw", "XDG_STATE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "would share the lab's own logins") ||
		!strings.Contains(string(out), "Redis: participants' workers share one Redis login") {
		t.Fatalf("lab serve on a Redis whose login cannot make users: exit %d (%v)\n%s", code, err, out)
	}
}

// lab serve --keep-logins D keeps a stopped class's logins for a resume,
// and the room's next lab serve removes them once D has passed.
func TestKeptLoginsAreRemovedByTheRoomsNextServeOnceExpired(t *testing.T) {
	// Without a room there is nowhere to keep when they expire: refused
	// before anything starts.
	if _, errOut, code := runLab(t, "serve", "--listen", freePort(t), "--keep-logins", "1h"); code != 2 || !strings.Contains(errOut, "--keep-logins needs --room") {
		t.Errorf("lab serve --keep-logins with no room: exit %d: %s", code, errOut)
	}
	env := labtest.Connect(t)
	rm, kim := env.NS, env.Derived("ke")
	state := t.TempDir()
	serve := func(args ...string) (*exec.Cmd, *syncBuf, string) {
		addr := freePort(t)
		cmd := exec.Command(labBin(t), append([]string{"serve", "--listen", addr, "--share-logins", "--room", rm, "--seats", "2"}, args...)...)
		cmd.Env = append(os.Environ(), "LAB_WORKSHOP_PASSWORD=pw-two", "XDG_STATE_HOME="+state)
		out := &syncBuf{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, out, addr
	}
	users := func() int {
		var n int
		env.Svc.MySQL.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User=?", services.ParticipantUser(kim)).Scan(&n)
		return n
	}
	first, out, addr := serve("--keep-logins", "1s")
	sshEnter(t, addr, kim)
	for deadline := time.Now().Add(20 * time.Second); users() == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no MySQL user for the participant:\n%s", out.String())
		}
	}
	first.Process.Signal(os.Interrupt)
	if err := first.Wait(); err != nil || !strings.Contains(out.String(), "kept the logins of 1 participant") || users() != 1 {
		t.Fatalf("lab serve --keep-logins after Ctrl-C: %v, %d users\n%s", err, users(), out.String())
	}
	time.Sleep(1500 * time.Millisecond)
	_, again, _ := serve()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(again.String(), "participants run: ssh"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the room's next lab serve did not start:\n%s", again.String())
		}
	}
	if !strings.Contains(again.String(), "removed the logins of 1 participant(s) a stopped class kept") || users() != 0 {
		t.Errorf("the room's next lab serve left the expired logins (%d users):\n%s", users(), again.String())
	}
}

// Two lab serve of one room: a participant who moved from A to B keeps
// their logins when A stops (B renewed them and holds their screen); A
// removes only what no other server of the room holds.
func TestAServerStoppingLeavesTheLoginsOfAParticipantOnAnotherServer(t *testing.T) {
	env := labtest.Connect(t)
	rm, ann := env.NS, env.Derived("mv")
	start := func() (*exec.Cmd, *syncBuf, string) {
		addr := freePort(t)
		cmd := exec.Command(labBin(t), "serve", "--listen", addr, "--share-logins", "--room", rm, "--seats", "2")
		cmd.Env = append(os.Environ(), "LAB_WORKSHOP_PASSWORD=pw-two", "XDG_STATE_HOME="+t.TempDir())
		out := &syncBuf{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, out, addr
	}
	a, aOut, aAddr := start()
	_, _, bAddr := start()
	onA := sshEnter(t, aAddr, ann)
	users := func() int {
		var n int
		env.Svc.MySQL.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User=?", services.ParticipantUser(ann)).Scan(&n)
		return n
	}
	for deadline := time.Now().Add(20 * time.Second); users() == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no MySQL user for the participant on A:\n%s", aOut.String())
		}
	}
	onA.Close() // she leaves A …
	// … and comes back on B, once A has let her screen go (B says "on
	// another server" until then).
	onB, last := false, ""
	for deadline := time.Now().Add(60 * time.Second); !onB; {
		if time.Now().After(deadline) {
			t.Fatalf("the participant never got a screen on B; it last said:\n%s", last)
		}
		c, err := gossh.Dial("tcp", bAddr, &gossh.ClientConfig{User: ann, Auth: []gossh.AuthMethod{gossh.Password("pw-two")},
			HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 2 * time.Second})
		if err != nil {
			time.Sleep(300 * time.Millisecond)
			continue
		}
		s, _ := c.NewSession()
		var screen syncBuf
		s.Stdout, s.Stderr = &screen, &screen
		s.StdinPipe() // open: an EOF would end the screen
		s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{})
		s.Shell()
		ended := make(chan struct{})
		go func() { s.Wait(); close(ended) }()
		// Until the screen shows or B refuses (the session ends): a busy
		// machine takes seconds to make her logins and draw it.
	attempt:
		for wait := time.After(20 * time.Second); !onB; {
			select {
			case <-ended:
				break attempt
			case <-wait:
				break attempt
			case <-time.After(100 * time.Millisecond):
				onB = strings.Contains(screen.String(), "reliable-messaging lab")
			}
		}
		if !onB {
			last = screen.String()
			c.Close()
			continue
		}
		t.Cleanup(func() { c.Close() })
	}
	time.Sleep(time.Second) // B's claim beats
	a.Process.Signal(os.Interrupt)
	if err := a.Wait(); err != nil {
		t.Fatalf("A after Ctrl-C: %v\n%s", err, aOut.String())
	}
	if users() != 1 {
		t.Errorf("A's stop removed the MySQL user of a participant B holds:\n%s", aOut.String())
	}
}

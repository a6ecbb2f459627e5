package main

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/services"
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
// runs the real binaries: lab serve --room, a participant over SSH who runs
// lesson 1's reset, then lab room --reset.
func TestLabRoomResetEndsTheSessionCleansTheNamespaceAndForgetsTheProgress(t *testing.T) {
	env := labtest.Connect(t)
	rm, alice := env.NS, env.Derived("al") // the room and its participant
	addr := freePort(t)
	serve := exec.Command(labBin(t), "serve", "--listen", addr, "--room", rm, "--seats", "2")
	serve.Env = append(os.Environ(), "LAB_WORKSHOP_PASSWORD=pw-reset", "XDG_STATE_HOME="+t.TempDir())
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
		db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", aliceDB).Scan(&n)
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
	out, errOut, code := runLab(t, "room", "--room", rm, "--reset", alice)
	if code != 0 || !strings.Contains(out, alice+" starts afresh") {
		t.Fatalf("lab room --reset: exit %d\n%s%s", code, out, errOut)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the participant's session did not end")
	}
	if exists() {
		t.Errorf("%s is still there", aliceDB)
	}
	out, _, _ = runLab(t, "room", "--room", rm)
	if strings.Contains(out, alice) {
		t.Errorf("the room still lists %s:\n%s", alice, out)
	}
}

// startServe runs a real `lab serve` process in room name on a free port.
func startServe(t *testing.T, name, state string) string {
	t.Helper()
	addr := freePort(t)
	serve := exec.Command(labBin(t), "serve", "--listen", addr, "--room", name, "--seats", "2")
	serve.Env = append(os.Environ(), "LAB_WORKSHOP_PASSWORD=pw-two", "XDG_STATE_HOME="+state)
	var out syncBuf
	serve.Stdout, serve.Stderr = &out, &out
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	return addr
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

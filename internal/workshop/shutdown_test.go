package workshop_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/internal/workshop"
)

// Shutdown (lab serve's SIGTERM) ends each session saying why and returns
// once every screen has closed its run: the participant's workers are gone
// by then. A connection that logged in and opened no session (a client at
// its password prompt's next step, or stalled) does not hold it up: it is
// closed at the end, not waited for until the deadline, which left the
// screens no time to close.
func TestShutdownEndsEachSessionSayingWhyAndWaitsForItsWorkersNotForIdleConnections(t *testing.T) {
	t.Parallel()
	addr, srv := serveLessons(t, 2, "../../ui/testdata/worker-lessons")
	name := who(t, "sd")
	tm := connect(t, addr, name)
	tm.startWorker(t, name)
	idle, err := dial(addr, who(t, "id"), password) // logged in, no session
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v (the connection with no session held it until its deadline)", err)
	}
	if w := workersOf(name); len(w) > 0 {
		t.Errorf("Shutdown returned with the participant's workers still running: %v", w)
	}
	tm.ended(t)
	out := tm.text()
	if i, j := strings.LastIndex(out, "\x1b[?1049l"), strings.LastIndex(out, "lab: the workshop server is shutting down"); i < 0 || j < i {
		t.Fatalf("want the terminal restored, then why; got:\n%q", tail(out))
	}
	if _, _, err := idle.SendRequest("keepalive@openssh.com", true, nil); err == nil {
		t.Error("the connection with no session is still open after Shutdown")
	}
	if c, err := dial(addr, who(t, "la"), password); err == nil {
		c.Close()
		t.Error("a participant logged in after Shutdown")
	}
}

// The instructor's session ends saying why too, and a session opened on a
// connection already in once Shutdown began is refused saying why (its
// screen would start after the wait for screens had begun).
func TestShutdownEndsTheInstructorsSessionAndOpensNoNewOne(t *testing.T) {
	t.Parallel()
	instr := newSigner(t)
	addr, srv := start(t, workshop.Config{Seats: 3, InstructorKeys: []ssh.PublicKey{pubOf(t, instr)}, Room: openRoom(t, "server-sd")})
	tm := instructor(t, addr, instr, 120, 35)
	tm.until(t, "the room", func(s string) bool { return strings.Contains(s, "participants:") })
	late, err := dial(addr, who(t, "lt"), password) // in, its session not yet asked for
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	// Once every session has ended, with the connections still open, the
	// connection already in asks for a session.
	var lateOut string
	var lateErr error
	srv.BeforeClose(func() {
		s, err := late.NewSession()
		if err != nil {
			lateErr = err
			return
		}
		var out terminal
		s.Stdout, s.Stderr = &out, &out
		s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{})
		if lateErr = s.Shell(); lateErr == nil {
			waited := make(chan error, 1)
			go func() { waited <- s.Wait() }()
			select {
			case <-waited:
			case <-time.After(10 * time.Second): // a screen: it does not end
				s.Close()
			}
		}
		lateOut = out.text()
	})
	ended := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ended <- srv.Shutdown(ctx)
	}()
	tm.ended(t)
	if !strings.Contains(tm.text(), "lab: the workshop server is shutting down") {
		t.Errorf("the instructor was not told why the session ended:\n%q", tail(tm.text()))
	}
	if err := <-ended; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if lateErr != nil || !strings.Contains(lateOut, "the workshop server is shutting down") || hasScreen(lateOut) {
		t.Errorf("a session asked for once Shutdown began: %v, %q; want it refused saying why", lateErr, tail(lateOut))
	}
}

// A SIGTERM during lab serve's start-up reaches Shutdown before Serve has
// its listener: Serve then returns at once, the listener closed, rather
// than serving a server nobody can stop.
func TestServeAfterShutdownReturnsAtOnce(t *testing.T) {
	t.Parallel()
	srv, err := workshop.New(workshop.Config{Seats: 1, Password: password, Services: connectServices(t),
		HostKey: filepath.Join(t.TempDir(), "host_ed25519"), ProgressDir: t.TempDir(), Binary: workerBinary(t), Lang: "en"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		ln.Close()
		t.Fatal("Serve after Shutdown was still serving 10 s later")
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Error("the listener still accepts after Serve returned")
	}
}

package workshop_test

// What a participant who wants out of their box, or wants to take the
// server down, can try, each with a real SSH client: keys they do not
// hold, a second screen on another server, any window size, silence,
// guessing, keepalives, escapes in what reaches terminals.

import (
	"context"
	"crypto/ed25519"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/internal/room"
	"github.com/rmlab/lab/internal/workshop"
)

// impostor offers a public key it does not hold, as OpenSSH does with
// only the .pub: the key query needs no signature, and what it sends as one
// the server refuses as a failed attempt (a signature of another algorithm)
// without ending the connection, so the client goes on to its next
// method. A server that decides anything when a key is merely offered is
// fooled by anyone with the public half (published on code-hosting
// profiles).
type impostor struct{ pub gossh.PublicKey }

func (i impostor) PublicKey() gossh.PublicKey { return i.pub }
func (i impostor) Sign(io.Reader, []byte) (*gossh.Signature, error) {
	return &gossh.Signature{Format: gossh.KeyAlgoRSASHA256, Blob: []byte("not a signature")}, nil
}

func newSigner(t *testing.T) gossh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pubOf(t *testing.T, s gossh.Signer) ssh.PublicKey {
	k, err := ssh.ParsePublicKey(s.PublicKey().Marshal())
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// shell opens a session with a pty of cols×rows on c.
func shell(t *testing.T, c *gossh.Client, cols, rows int) *terminal {
	t.Helper()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	tm := &terminal{client: c, sess: s, done: make(chan error, 1)}
	s.Stdout, s.Stderr = tm, tm
	if tm.in, err = s.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm-256color", rows, cols, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	go func() { tm.done <- s.Wait() }()
	return tm
}

// instructor logs in as the instructor with key and opens the room's
// screen at cols×rows.
func instructor(t *testing.T, addr string, key gossh.Signer, cols, rows int) *terminal {
	t.Helper()
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: workshop.Instructor, Auth: []gossh.AuthMethod{gossh.PublicKeys(key)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return shell(t, c, cols, rows)
}

func openRoom(t *testing.T, self string) *room.Room {
	t.Helper()
	svc := connectServices(t)
	rm, err := room.Open(context.Background(), svc.MySQL, svc.Config.MySQL, roomName(t), self)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rm.Close)
	return rm
}

// A client that offers the instructor's public key without its private
// half, then logs in with the password or a participant's key, is a
// participant trying to be the instructor: refused, as soft-serve refuses
// it. (Offering the key used to set the instructor flag.)
func TestAnInstructorKeyOfferedWithoutItsPrivateHalfOpensNothing(t *testing.T) {
	t.Parallel()
	instr, part := newSigner(t), newSigner(t)
	rm := openRoom(t, "server-i")
	addr, _ := start(t, workshop.Config{Seats: 3, InstructorKeys: []ssh.PublicKey{pubOf(t, instr)},
		ParticipantKeys: []ssh.PublicKey{pubOf(t, part)}, Room: rm})
	fake := impostor{pub: instr.PublicKey()}
	for name, auth := range map[string][]gossh.AuthMethod{
		"then the password":         {gossh.PublicKeys(fake), gossh.Password(password)},
		"then a participant's key":  {gossh.PublicKeys(fake, part)},
		"a participant's key alone": {gossh.PublicKeys(part)},
		"the password alone":        {gossh.Password(password)},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: workshop.Instructor, Auth: auth,
				HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
			if err != nil {
				t.Fatalf("the probe did not log in at all (%v): it cannot show the refusal", err)
			}
			defer c.Close()
			tm := shell(t, c, 100, 30)
			tm.ended(t)
			if !strings.Contains(tm.text(), "the room opens only with an instructor's key") || strings.Contains(tm.text(), "room "+roomName(t)) {
				t.Fatalf("the probe got: %q", tail(tm.text()))
			}
		})
	}
	// The instructor's own key still opens it.
	c, err := gossh.Dial("tcp", addr, &gossh.ClientConfig{User: workshop.Instructor, Auth: []gossh.AuthMethod{gossh.PublicKeys(instr)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	shell(t, c, 120, 30).until(t, "the room", func(s string) bool { return strings.Contains(s, "room "+roomName(t)) })
}

// A participant has one screen in the whole room: on the other server of
// it they are refused, with the server that holds their screen named;
// once they quit there, the other server takes them.
func TestOneScreenPerParticipantAcrossTheServersOfARoom(t *testing.T) {
	t.Parallel()
	a, _ := serveRoom(t, roomName(t), "server-a")
	b, _ := serveRoom(t, roomName(t), "server-b")
	al := who(t, "al")
	first := connect(t, a, al)
	first.until(t, "alice's screen on A", hasScreen)
	second := connect(t, b, al)
	second.ended(t)
	if !strings.Contains(second.text(), al+" already has a screen open on server-a") {
		t.Fatalf("a second screen on server B: %q", second.text())
	}
	first.in.Write([]byte("q"))
	first.ended(t)
	again := connect(t, b, al)
	again.until(t, "alice's screen on B once A's closed", hasScreen)
}

// However large a window a client asks for (and however many times it
// resizes), the screen is at most MaxWidth×MaxHeight: the server lives,
// its memory stays bounded, and the next participant still gets a screen.
// 10000×5000 used to end the server with "fatal error: out of memory".
func TestAHugeWindowIsClampedAndTheServerLives(t *testing.T) {
	addr, _ := serve(t, 3)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	before := heap()
	c, err := dial(addr, who(t, "hu"), password)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tm := shell(t, c, 10000, 5000)
	tm.until(t, "the screen", hasScreen)
	for i := 0; i < 200; i++ { // a resize flood
		tm.sess.WindowChange(5000-i, 10000-i)
	}
	tm.in.Write([]byte("\r"))
	time.Sleep(2 * time.Second)
	grew := int64(heap()) - int64(before)
	t.Logf("heap grew %d MB with a 10000×5000 pty and 200 resizes", grew>>20)
	// Measured: 25 MB clamped; 215 MB without the width clamp, 274 MB
	// without the height clamp. 100 MB sits between, with room for noise.
	if grew > 100<<20 {
		t.Errorf("the heap grew by %d MB for one session", grew>>20)
	}
	next := connect(t, addr, who(t, "ne"))
	next.until(t, "the next participant's screen", hasScreen)
}

// A connection that says nothing is closed within the login timeout, and
// one that logs in but never opens its screen too; an address holds at
// most PendingPerAddress such connections at once.
func TestSilentConnectionsAreClosedAndCapped(t *testing.T) {
	t.Parallel()
	addr, _ := start(t, workshop.Config{Seats: 3, LoginTimeout: time.Second, PendingPerAddress: 3})
	closedWithin := func(c net.Conn) time.Duration {
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, c) // the server's banner, then EOF
		return time.Since(start)
	}
	var silent []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent = append(silent, c)
	}
	time.Sleep(100 * time.Millisecond)
	fourth, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if d := closedWithin(fourth); d > 500*time.Millisecond {
		t.Errorf("the fourth silent connection from one address was held %s", d)
	}
	for i, c := range silent {
		if d := closedWithin(c); d > 3*time.Second {
			t.Errorf("silent connection %d was held %s past a 1 s login timeout", i, d)
		}
	}
	// Logged in, no screen asked for.
	lazy, err := dial(addr, who(t, "la"), password)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- lazy.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("a connection that never opened its screen is still open after 5 s")
	}
	connect(t, addr, who(t, "ok")).until(t, "a screen after all that", hasScreen)
}

// One address cannot guess the password faster than about five times a
// second, however many connections it opens; a participant behind it who
// knows the password still gets in.
func TestWrongPasswordsAreSlowedToAboutFiveASecondPerAddress(t *testing.T) {
	addr, _ := serve(t, 3)
	var guesses atomic.Int64
	stop := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				wrong := gossh.RetryableAuthMethod(gossh.PasswordCallback(func() (string, error) {
					if time.Now().After(stop) {
						return "", io.EOF
					}
					guesses.Add(1)
					return "guess", nil
				}), 100)
				gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "mallory", Auth: []gossh.AuthMethod{wrong},
					HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
			}
		}()
	}
	wg.Wait()
	n := guesses.Load()
	t.Logf("%d wrong guesses in 2 s from 6 connections at a time", n)
	if n > 20 { // each connection's first guess free, then 5 a second, a few in flight at the end
		t.Errorf("%d guesses in 2 s", n)
	}
	connect(t, addr, who(t, "kn")).until(t, "a participant who knows the password", hasScreen)
}

// --idle counts key presses only: SSH keepalives alone do not keep a
// session; the session ends with the terminal restored and one line
// saying why. Keys do keep it.
func TestKeepalivesDoNotKeepASessionPastIdle(t *testing.T) {
	t.Parallel()
	addr, _ := start(t, workshop.Config{Seats: 3, IdleTimeout: 2 * time.Second})
	typing := connect(t, addr, who(t, "ty"))
	idle := connect(t, addr, who(t, "id"))
	typing.until(t, "a screen", hasScreen)
	idle.until(t, "a screen", hasScreen)
	deadline := time.Now().Add(3500 * time.Millisecond)
	for time.Now().Before(deadline) {
		idle.client.SendRequest("keepalive@openssh.com", true, nil)
		typing.in.Write([]byte("\x1b[B")) // down: a key, nothing run
		time.Sleep(250 * time.Millisecond)
	}
	idle.ended(t)
	out := idle.text()
	restored := strings.LastIndex(out, "\x1b[?1049l")
	said := strings.LastIndex(out, "lab: no key pressed for 2s")
	if restored < 0 || said < restored {
		t.Fatalf("want the alternate screen left, then the reason; got:\n%q", tail(out))
	}
	select {
	case <-typing.done:
		t.Fatal("a participant pressing keys was ended as idle")
	default:
	}
}

// What the instructor says reaches every terminal as plain text: an OSC 8
// link, a screen clear or a bell in it never reaches a participant's byte
// stream; a line cut at the limit stays whole characters; and the end of a
// session restores the terminal and says who ended it.
func TestSayReachesTerminalsAsPlainTextAndEndSaysWhy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	addr, rm := serveRoom(t, roomName(t), "server-s")
	p := connect(t, addr, who(t, "pl"))
	p.until(t, "a screen", hasScreen)
	evil := "\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\ \x1b[2J\x07\x9b31m\x1b]2;owned\x07 done"
	before := len(p.text())
	if err := rm.Send(ctx, room.Command{Kind: room.Say, Arg: evil}); err != nil {
		t.Fatal(err)
	}
	p.until(t, "the instructor's line", func(s string) bool { return strings.Contains(s, "instructor: click me done") })
	// What the screen wrote since (its own redraws use neither of these).
	since := p.text()[before:]
	for _, bad := range []string{"evil.example", "\x1b]8", "\x1b[2J", "\x07", "\u009b", "owned"} {
		if strings.Contains(since, bad) {
			t.Errorf("%q reached the participant's terminal", bad)
		}
	}
	long := strings.Repeat("消息", 100) // 600 bytes: the cut falls inside a character
	if err := rm.Send(ctx, room.Command{Kind: room.Say, Arg: long}); err != nil {
		t.Fatalf("a long line in Chinese: %v", err)
	}
	if err := rm.Send(ctx, room.Command{Kind: room.End, Target: who(t, "pl")}); err != nil {
		t.Fatal(err)
	}
	p.ended(t)
	out := p.text()
	if i, j := strings.LastIndex(out, "\x1b[?1049l"), strings.LastIndex(out, "lab: the instructor ended your session"); i < 0 || j < i {
		t.Fatalf("want the terminal restored, then why; got:\n%q", tail(out))
	}
}

// watch NAME on the instructor's screen mirrors a participant's screen
// live, read-only, from another server of the room: what alice's screen
// shows after her key appears on the instructor's, and esc goes back.
func TestWatchMirrorsAParticipantsScreenAcrossServers(t *testing.T) {
	t.Parallel()
	instr := newSigner(t)
	a, _ := serveRoom(t, roomName(t), "server-a")
	rmB := openRoom(t, "server-b")
	b, _ := start(t, workshop.Config{Seats: 3, InstructorKeys: []ssh.PublicKey{pubOf(t, instr)}, Room: rmB})
	al := who(t, "wa")
	alice := connect(t, a, al)
	alice.until(t, "alice's screen", hasScreen)
	tm := instructor(t, b, instr, 140, 40)
	tm.until(t, "the room with alice", func(s string) bool { return strings.Contains(s, al) })
	tm.in.Write([]byte(":watch " + al + "\r"))
	tm.until(t, "alice's screen mirrored", func(s string) bool {
		return strings.Contains(s, "watching "+al) && strings.Contains(s, "The first processing")
	})
	alice.in.Write([]byte("\r")) // her reset step runs
	tm.until(t, "alice's step mirrored", func(s string) bool { return strings.Contains(s, "recreated blog_idempotency_lab_"+al) })
	tm.in.Write([]byte("\x1b"))
	time.Sleep(300 * time.Millisecond)
	tm.in.Write([]byte("r"))
	tm.until(t, "back in the room", func(s string) bool { return strings.Contains(s[max(len(s)-3000, 0):], "participants:") })
}

// present N runs lesson N on the instructor's side and every participant's
// screen, on any server of the room, follows it live and read-only (their
// keys do nothing); q ends it and each is back where they were.
func TestPresentPutsTheInstructorsLessonOnEveryScreen(t *testing.T) {
	t.Parallel()
	instr := newSigner(t)
	a, _ := serveRoom(t, roomName(t), "server-a")
	rmB := openRoom(t, "server-b")
	b, _ := start(t, workshop.Config{Seats: 3, InstructorKeys: []ssh.PublicKey{pubOf(t, instr)}, Room: rmB,
		PresenterNamespace: who(t, "pr")})
	al := who(t, "pa")
	alice := connect(t, a, al)
	alice.until(t, "alice's screen", hasScreen)
	tm := instructor(t, b, instr, 120, 35)
	tm.until(t, "the room", func(s string) bool { return strings.Contains(s, al) })
	tm.in.Write([]byte(":present 1\r"))
	tm.until(t, "lesson 1 on the instructor's screen", func(s string) bool { return strings.Contains(s, "The first processing") })
	alice.until(t, "the presentation on alice's screen", func(s string) bool {
		return strings.Contains(s, "the instructor is presenting")
	})
	alice.in.Write([]byte("\r")) // read-only: her own reset must not run
	tm.in.Write([]byte("\r"))    // the presenter's reset runs
	alice.until(t, "the presenter's step on alice's screen", func(s string) bool {
		return strings.Contains(s, "recreated blog_idempotency_lab_"+who(t, "pr"))
	})
	if strings.Contains(alice.text(), "recreated blog_idempotency_lab_"+al) {
		t.Fatal("a key of alice's ran her own step during the presentation")
	}
	tm.in.Write([]byte("q"))
	tm.until(t, "the presentation ended", func(s string) bool { return strings.Contains(s, "present off") })
	// Her screen may have switched back before the instructor's said so,
	// and a redraw writes only the cells that changed: each resize makes
	// the screen write itself whole, her own (her namespace, not the
	// presenter's, and no banner) or still the presentation.
	own := "blog_idempotency_lab_" + al
	for i, deadline := 0, time.Now().Add(30*time.Second); ; i++ {
		before := len(alice.text())
		if err := alice.sess.WindowChange(30, 100+i%2); err != nil {
			t.Fatalf("resize alice's terminal: %v", err)
		}
		time.Sleep(time.Second)
		if got := alice.text()[before:]; strings.Contains(got, own) && !strings.Contains(got, "the instructor is presenting") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's own screen did not come back; the terminal shows:\n%s", tail(alice.text()))
		}
	}
	// present off leaves no frame for the next presentation to show.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, ok, _ := rmB.Frame(context.Background(), room.Presenter); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("present off left the presented frame in the room")
		}
	}
}

// reset NAME from the instructor's screen ends the participant's session
// on whichever server it runs, cleans their namespace and forgets their
// progress, as lab room --reset does.
func TestResetFromTheRoomScreenEndsCleansAndForgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	instr := newSigner(t)
	a, rmA := serveRoom(t, roomName(t), "server-a")
	rmB := openRoom(t, "server-b")
	b, _ := start(t, workshop.Config{Seats: 3, InstructorKeys: []ssh.PublicKey{pubOf(t, instr)}, Room: rmB})
	al := who(t, "re")
	alice := connect(t, a, al)
	alice.until(t, "alice's screen", hasScreen)
	alice.in.Write([]byte("\r"))
	alice.until(t, "her reset step", func(s string) bool { return strings.Contains(s, "recreated blog_idempotency_lab_"+al) })
	tm := instructor(t, b, instr, 140, 40)
	tm.until(t, "the room with alice", func(s string) bool { return strings.Contains(s, al) })
	tm.in.Write([]byte(":reset " + al + "\r"))
	alice.ended(t)
	tm.until(t, "the reset done", func(s string) bool { return strings.Contains(s, "sent: reset "+al) })
	var n int
	if err := connectServices(t).MySQL.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", "blog_idempotency_lab_"+al).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("alice's database is still there")
	}
	if ps, _ := rmA.Participants(ctx); len(ps) != 0 {
		t.Errorf("the room still has %+v", ps)
	}
}

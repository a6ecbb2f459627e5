package workshop_test

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"github.com/rmlab/lab/internal/workshop"
)

// What one address or one session may cost the server.

// Sixty guessers from one address (a class behind one NAT address, one of
// them guessing) do not delay a participant from that address who knows
// the password: a right password is answered at once. It took 12 s, and
// with --login-timeout 10s never got in. The log says the guesses in a
// line or two, not one each.
func TestARightPasswordIsNeverDelayedByGuessersFromItsAddress(t *testing.T) {
	var log syncLog
	addr, _ := start(t, workshop.Config{Seats: 3, Log: &log})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var guesses atomic.Int64
	for g := 0; g < 60; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				wrong := gossh.RetryableAuthMethod(gossh.PasswordCallback(func() (string, error) {
					select {
					case <-stop:
						return "", io.EOF
					default:
					}
					guesses.Add(1)
					return "guess", nil
				}), 100)
				gossh.Dial("tcp", addr, &gossh.ClientConfig{User: "mallory", Auth: []gossh.AuthMethod{wrong},
					HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second})
			}
		}()
	}
	time.Sleep(time.Second) // the guessers are queued up
	began := time.Now()
	c, err := dial(addr, who(t, "nt"), password)
	took := time.Since(began)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("the right password from the guessers' address: %v", err)
	}
	c.Close()
	if took > time.Second {
		t.Errorf("the right password took %s to log in beside 60 guessers", took)
	}
	lines := strings.Count(log.String(), "wrong password")
	t.Logf("%d wrong guesses; the right password in %s; %d log lines of wrong passwords", guesses.Load(), took, lines)
	if lines > 2 {
		t.Errorf("%d log lines for one address's wrong guesses in one window:\n%s", lines, log.String())
	}
}

// syncLog is a server's log, read while it writes.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *syncLog) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// Ten thousand env requests of 10 kB each cost the server no more than a
// few of them: past 32 (or past 4 kB each) they are refused before the SSH
// library keeps them. It kept every one (2000 × 100 kB: 300 MB).
func TestAFloodOfEnvRequestsIsRefusedAndCostsNoMemory(t *testing.T) {
	addr, _ := serve(t, 2)
	c, err := dial(addr, who(t, "en"), password)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	value := strings.Repeat("x", 10*1024)
	accepted := 0
	for i := 0; i < 40; i++ { // with replies: how many are taken
		if err := s.Setenv(fmt.Sprintf("V%d", i), value[:1024]+strconv.Itoa(i)); err == nil {
			accepted++
		}
	}
	if err := s.Setenv("BIG", value); err == nil {
		t.Error("a 10 kB env request was taken")
	}
	for i := 0; i < 10000; i++ { // the flood, without waiting for replies
		payload := gossh.Marshal(struct{ Key, Value string }{fmt.Sprintf("F%d", i), value[:3000]}) // under the size cap: the count refuses it
		if _, err := s.SendRequest("env", false, payload); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if accepted != 32 {
		t.Errorf("%d env requests accepted, want 32", accepted)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew %d MB under the flood", grew>>20)
	}
	// The session still gets its screen.
	tm := &terminal{client: c, sess: s, done: make(chan error, 1)}
	s.Stdout, s.Stderr = tm, tm
	s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{})
	s.Shell()
	tm.until(t, "the screen after the flood", hasScreen)
}

// One connection holds at most four sessions at once, and its sessions
// together are given 64 kB of env: a client that opens a thousand session
// channels, each sending 32 × 4 kB (it grew the server by 155 MB), costs
// what four do. A closed session frees its place; each kind of refusal
// has one log line per connection, not one per request.
func TestOneConnectionsSessionsAndTheirEnvAreBoundedTogether(t *testing.T) {
	t.Parallel()
	var log syncLog
	addr, _ := start(t, workshop.Config{Seats: 2, Log: &log})
	c, err := dial(addr, who(t, "cs"), password)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sessions []*gossh.Session
	refused := 0
	for i := 0; i < 50; i++ {
		s, err := c.NewSession()
		if err != nil {
			refused++
			continue
		}
		sessions = append(sessions, s)
	}
	if len(sessions) != 4 || refused != 46 {
		t.Fatalf("one connection opened %d sessions (%d refused), want 4", len(sessions), refused)
	}
	value := strings.Repeat("x", 4000)
	accepted := 0
	for i, s := range sessions {
		for j := 0; j < 32; j++ {
			if s.Setenv(fmt.Sprintf("V%d_%d", i, j), value) == nil {
				accepted++
			}
		}
	}
	if accepted > 64*1024/4000 || accepted < 12 {
		t.Errorf("the connection's sessions were given %d env requests of 4 kB, want the 64 kB its budget holds (16)", accepted)
	}
	sessions[0].Close()
	var again *gossh.Session
	for deadline := time.Now().Add(5 * time.Second); again == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		again, _ = c.NewSession()
	}
	if again == nil {
		t.Error("a closed session did not free its place on the connection")
	}
	for _, want := range []string{"refused more sessions on one connection", "refused env requests"} {
		if n := strings.Count(log.String(), want); n != 1 {
			t.Errorf("%d log lines %q, want 1:\n%s", n, want, log.String())
		}
	}
}

// A subsystem (sftp) or X11 request is refused with a log line, once per
// connection; it used to be refused with none.
func TestASubsystemRequestIsRefusedAndLogged(t *testing.T) {
	t.Parallel()
	var log syncLog
	addr, _ := start(t, workshop.Config{Seats: 2, Log: &log})
	c, err := dial(addr, who(t, "sf"), password)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 3; i++ {
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.RequestSubsystem("sftp"); err == nil {
			t.Error("an sftp subsystem was granted")
		}
		s.Close()
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), "a subsystem request"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line for the refused subsystem:\n%s", log.String())
		}
	}
	if n := strings.Count(log.String(), "a subsystem request"); n != 1 {
		t.Errorf("%d log lines for one connection's subsystem requests, want 1", n)
	}
}

// One name's refused sessions (twelve here) write at most five log lines
// in ten seconds (and the room's log with them): 21000 refused challenge-result
// sessions over one connection wrote 21000.
func TestOneNamesRefusalsAreBoundedInTheLog(t *testing.T) {
	t.Parallel()
	var log syncLog
	addr, _ := start(t, workshop.Config{Seats: 2, Log: &log})
	name := who(t, "fl")
	c, err := dial(addr, name, password)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 12; i++ {
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		s.CombinedOutput("challenge-result") // refused: the room keeps only the server's verdicts
	}
	if n := strings.Count(log.String(), "refused "+name+" from"); n < 1 || n > 5 {
		t.Errorf("%d log lines for 12 refused sessions of one name, want 1 to 5:\n%s", n, log.String())
	}
}

// A connection that logs in and never opens a session (ssh -N) holds a
// pending slot only until the login timeout: then it is closed, with a log
// line that says why; it used to leave none.
func TestAConnectionThatOpensNoSessionIsClosedAndLogged(t *testing.T) {
	t.Parallel()
	var log syncLog
	addr, _ := start(t, workshop.Config{Seats: 2, Log: &log, LoginTimeout: 2 * time.Second})
	c, err := dial(addr, who(t, "nn"), password)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	closed := make(chan error, 1)
	go func() { closed <- c.Wait() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("a connection with no session is still open 10 s after a 2 s login timeout")
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(log.String(), "no screen within 2s of connecting"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line for the connection closed with no session:\n%s", log.String())
		}
	}
}

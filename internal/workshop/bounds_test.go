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

package workshop_test

import (
	"sync/atomic"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// One name reconnecting in a tight loop to two servers of a room never has
// two live screens at one instant. Each round: a screen on A dropped at
// once, a second on A at once (it must wait for the first to close), and
// while that one lives, a third on B, which must be refused. A release
// late from the first session used to free the second's claim (a claim by
// the same server kept the row), and B then opened a second screen.
func TestAQuickReconnectLoopNeverHasTwoLiveScreens(t *testing.T) {
	t.Parallel()
	rmName := roomName(t)
	// B waits long enough for A's first session to close and release: a
	// release that freed the wrong claim would then let B in.
	a, _, sa := serveRoomServer(t, rmName, "server-a", "", "", 3*time.Second)
	b, _, sb := serveRoomServer(t, rmName, "server-b", "", "", 3*time.Second)
	// A's screens take a second to close, as a run with workers does: the
	// window in which a late release did its harm.
	sa.SlowToClose(time.Second)
	al := who(t, "al")
	stop := make(chan struct{})
	var both atomic.Int32
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if sa.Live(al) && sb.Live(al) {
				both.Add(1)
			}
		}
	}()
	open := func(addr string) (*terminal, bool) {
		c, err := dial(addr, al, password)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		tm := &terminal{client: c, sess: s, done: make(chan error, 1)}
		s.Stdout, s.Stderr = tm, tm
		s.RequestPty("xterm-256color", 30, 100, gossh.TerminalModes{})
		s.Shell()
		go func() { tm.done <- s.Wait() }()
		deadline := time.After(10 * time.Second)
		for !hasScreen(tm.text()) {
			select {
			case <-tm.done:
				return tm, false // refused
			case <-deadline:
				return tm, false
			case <-time.After(10 * time.Millisecond):
			}
		}
		return tm, true
	}
	connections, rounds := 0, 0
	for rounds < 3 {
		first, _ := open(a)
		first.client.Close() // dropped at once
		connections++
		// The second screen on A waits for the first to close; a login
		// that found it still closing is refused, and comes again.
		var second *terminal
		for try := 0; ; try++ {
			tm, ok := open(a)
			connections++
			if ok {
				second = tm
				break
			}
			tm.client.Close()
			if try == 20 {
				t.Fatalf("round %d: no second screen on server-a in 20 tries", rounds+1)
			}
		}
		third, ok := open(b)
		connections++
		rounds++
		if ok {
			t.Fatalf("round %d: a screen on server-b while %s's screen on server-a lives", rounds, al)
		}
		third.client.Close()
		second.client.Close()
	}
	// Then a tight loop, alternating servers, each screen dropped at once.
	sa.SlowToClose(0)
	for i := 0; connections < 50; i++ {
		tm, _ := open([]string{a, b}[i%2])
		tm.client.Close()
		connections++
	}
	close(stop)
	if n := both.Load(); n > 0 {
		t.Fatalf("two live screens of one name at one instant, seen %d times", n)
	}
	t.Logf("%d connections, %d rounds", connections, rounds)
}

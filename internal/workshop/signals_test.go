package workshop_test

import (
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// A signal to the server's process is the server's to handle (lab serve
// ends every session saying why, then saves each one's progress). A
// session's screen that caught SIGTERM itself quit at once, racing that,
// and a process hosting sessions (a test binary among them) no longer
// ended on SIGTERM. Not parallel: the signal reaches the whole process.
func TestASessionsScreenLeavesTheProcesssSignalsToTheServer(t *testing.T) {
	addr, _ := serve(t, 2)
	p := connect(t, addr, who(t, "sg"))
	p.until(t, "a screen", hasScreen)
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGTERM) // this test's, so the process lives
	defer signal.Stop(caught)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-caught:
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM to this process never arrived")
	}
	select {
	case <-p.done:
		t.Fatalf("the session's screen ended on its server process's SIGTERM; the terminal shows:\n%s", tail(p.text()))
	case <-time.After(2 * time.Second):
	}
}

package containers

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A container is swept only when its owner is gone: a lab process of this
// machine that no longer runs, or one from before a reboot; never a live
// lab's, never another machine's.
func TestOnlyADeadLabsContainersAreOrphans(t *testing.T) {
	// A process that is gone: started and waited for.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	host, _ := os.Hostname()
	mine := Owner("mysql")
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   bool
	}{
		{"this test's own (a live process)", mine, false},
		{"a pid that has exited", with(mine, LabelPID, dead), true},
		{"another machine's lab", with(with(mine, LabelPID, dead), LabelHost, host+"-other"), false},
		{"from before a reboot", with(mine, LabelBoot, "another-boot"), true},
		{"a pid taken by another process (pid 1, started at another time)", with(mine, LabelPID, "1"), true},
		{"no pid", with(mine, LabelPID, ""), true},
	} {
		if got := Orphaned(Container{ID: "x", Labels: c.labels}); got != c.want {
			t.Errorf("%s: orphaned %v, want %v", c.name, got, c.want)
		}
	}
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{}
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// An engine that is busy answers late, and is still an engine; a socket
// nobody listens on is none, at once.
func TestAnEngineThatAnswersLateAnswersAndADeadSocketAnswersAtOnce(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const late = 2500 * time.Millisecond
	go http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(late)
		w.Write([]byte("OK"))
	}))
	t0 := time.Now()
	if !(Engine{Socket: sock}).Answers(context.Background()) {
		t.Errorf("an engine answering its ping after %s: Answers false after %s", late, time.Since(t0))
	}
	// The control: a ping limit shorter than the engine's delay fails it.
	defer func(p time.Duration) { PingLimit = p }(PingLimit)
	PingLimit = time.Second
	if (Engine{Socket: sock}).Answers(context.Background()) {
		t.Errorf("with a 1 s ping limit, an engine answering after %s: Answers true", late)
	}
	PingLimit = time.Minute
	dead := filepath.Join(dir, "dead.sock")
	dl, err := net.Listen("unix", dead)
	if err != nil {
		t.Fatal(err)
	}
	dl.(*net.UnixListener).SetUnlinkOnClose(false)
	dl.Close() // the socket file stays; nothing listens
	t0 = time.Now()
	if (Engine{Socket: dead}).Answers(context.Background()) {
		t.Error("a socket nobody listens on: Answers true")
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("a socket nobody listens on took %s to answer false", d)
	}
	if (Engine{Socket: filepath.Join(dir, "none.sock")}).Answers(context.Background()) {
		t.Error("no socket: Answers true")
	}
}

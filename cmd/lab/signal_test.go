package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

// workerPIDs lists live `lab worker` processes named name that a lab
// started for namespace ns (their environment says LAB_NAMESPACE=ns):
// another run's workers of the same name are not this test's.
func workerPIDs(t *testing.T, name, ns string) []string {
	t.Helper()
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		cmd := string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		if strings.Contains(cmd, "worker consumer --name "+name) {
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00LAB_NAMESPACE="+ns+"\x00")) {
				continue
			}
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
				continue // a zombie is dead, waiting for its reaper
			}
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// connectionsTo counts the MySQL sessions on database db.
func connectionsTo(t *testing.T, env *labtest.Env, db string) int {
	t.Helper()
	var n int
	if err := env.Svc.MySQL.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB=?", db).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// No worker and no connection outlives the lab: not after SIGTERM, Ctrl-C
// (SIGINT), nor the lab's own sudden death (SIGKILL, as a panic would).
func TestNoWorkerOrConnectionOutlivesTheLab(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			env := labtest.Connect(t)
			db := env.Name(services.IdempotencyDB)
			cmd := exec.Command(labBin(t), "replay", "testdata/long-worker.md", "--namespace", env.NS)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the worker pauses and the session holds its lock", func() bool {
				return len(workerPIDs(t, "sigtest", env.NS)) == 1 && connectionsTo(t, env, db) >= 2
			})
			signalExit(t, cmd, sig)
			eventually(t, "no worker left", func() bool { return len(workerPIDs(t, "sigtest", env.NS)) == 0 })
			eventually(t, "no connection left on "+db, func() bool { return connectionsTo(t, env, db) == 0 })
			if sig != syscall.SIGKILL && cmd.ProcessState.ExitCode() == 0 {
				t.Errorf("an interrupted replay exited 0:\n%s", errOut.String())
			}
		})
	}
}

func TestReplayLeavesNoWorkerAfterANormalExit(t *testing.T) {
	p := t.TempDir() + "/short.md"
	src, _ := os.ReadFile("testdata/long-worker.md")
	os.WriteFile(p, bytes.Replace(src, []byte("for=60s"), []byte("for=10ms"), 1), 0o644)
	env := labtest.Connect(t)
	_, errOut, code := runLab(t, "replay", p, "--namespace", env.NS)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if pids := workerPIDs(t, "sigtest", env.NS); len(pids) != 0 {
		t.Fatalf("workers left: %v", pids)
	}
	eventually(t, "no connection left", func() bool { return connectionsTo(t, env, env.Name(services.IdempotencyDB)) == 0 })
}

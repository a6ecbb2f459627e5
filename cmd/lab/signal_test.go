package main

import (
	"bytes"
	"database/sql"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// workerPIDs lists live `lab worker` processes started for namespace ns.
func workerPIDs(t *testing.T, name string) []string {
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
			if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && strings.Contains(string(st), ") Z ") {
				continue // a zombie is dead, waiting for its reaper
			}
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func connectionsTo(t *testing.T, db string) int {
	t.Helper()
	c, err := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	if err := c.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB=?", db).Scan(&n); err != nil {
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
			ns := "clisig"
			db := "blog_idempotency_lab_" + ns
			cmd := exec.Command(bin, "replay", "testdata/long-worker.md", "--namespace", ns)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "the worker pauses and the session holds its lock", func() bool {
				return len(workerPIDs(t, "sigtest")) == 1 && connectionsTo(t, db) >= 2
			})
			signalExit(t, cmd, sig)
			eventually(t, "no worker left", func() bool { return len(workerPIDs(t, "sigtest")) == 0 })
			eventually(t, "no connection left on "+db, func() bool { return connectionsTo(t, db) == 0 })
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
	_, errOut, code := runLab(t, "replay", p, "--namespace", "clinormal")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if pids := workerPIDs(t, "sigtest"); len(pids) != 0 {
		t.Fatalf("workers left: %v", pids)
	}
	eventually(t, "no connection left", func() bool { return connectionsTo(t, "blog_idempotency_lab_clinormal") == 0 })
}

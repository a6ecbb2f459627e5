package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/room"
)

// A participant's verdict from their own machine reaches the room the way
// lab challenge run --workshop sends it: the system's ssh client, their
// key, the workshop's SSH door of a real lab serve; the room keeps it
// under the name the key logged in as and logs who sent it.
func TestAVerdictGoesThroughARealSSHClientToTheRoom(t *testing.T) {
	labtest.Needs(t, labtest.SSH)
	env := labtest.Connect(t, labtest.MySQL)
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	alice := env.Derived("al")
	addr, serveOut := runServe(t, []string{"XDG_STATE_HOME=" + t.TempDir()}, "--room", env.NS, "--seats", "2", "--participant-keys", key+".pub")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab serve never listened:\n%s", serveOut.String())
		}
	}
	config := filepath.Join(dir, "config")
	os.WriteFile(config, []byte(fmt.Sprintf("Host *\n  IdentityFile %s\n  IdentitiesOnly yes\n  BatchMode yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n", key)), 0o600)
	t.Setenv("LAB_SSH_COMMAND", "ssh -F "+config)
	var out, errOut bytes.Buffer
	sum := &chaos.Summary{Seed: 3, Committed: 200, Once: 200}
	if err := sendToWorkshop(alice+"@"+addr, "once", sum, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s\nlab serve:\n%s", err, out.String(), errOut.String(), serveOut.String())
	}
	if !strings.Contains(out.String(), "kept in room") {
		t.Errorf("the door said %q", out.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rm, err := room.Existing(ctx, env.Svc.MySQL, env.Svc.Config.MySQL, env.NS, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Close()
	ps, err := rm.Participants(ctx)
	if err != nil || len(ps) != 1 || ps[0].Name != alice || ps[0].Challenges["once"] == nil || !ps[0].Challenges["once"].Passed {
		t.Fatalf("the room keeps %+v (%v)", ps, err)
	}
	entries, _ := rm.Log(ctx, 50, "")
	if log := fmt.Sprint(entries); !strings.Contains(log, alice+" from 127.0.0.1 sent a challenge verdict from their own machine: once passed under seed 3") {
		t.Errorf("the room's log does not say who sent it: %s", log)
	}
}

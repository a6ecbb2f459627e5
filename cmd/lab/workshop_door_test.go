package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/room"
)

// The room's verdicts come from runs its server made: lab challenge run
// --workshop runs the challenge on a real lab serve, through the system's
// ssh client and the participant's key, with only the program on the
// participant's machine. An honest program passes and the room keeps the
// server's verdict; a cheat fails; a verdict the participant sends is
// refused; the door forwards nothing the participant's run did not ask
// for.
func TestTheWorkshopsServerGradesAChallengeThroughARealSSHClient(t *testing.T) {
	labtest.Needs(t, labtest.SSH)
	labtest.Needs(t, labtest.OwnMySQL)
	env := labtest.Connect(t)
	dir := t.TempDir()
	key := filepath.Join(dir, "id_ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	alice, bob := env.Derived("al"), env.Derived("bo")
	addr, serveOut := runServe(t, []string{"XDG_STATE_HOME=" + t.TempDir(), "LAB_BROKER_CONTROL="}, "--room", env.NS, "--seats", "4", "--participant-keys", key+".pub")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lab serve never listened:\n%s", serveOut.String())
		}
	}
	host, port, _ := net.SplitHostPort(addr)
	config := filepath.Join(dir, "config")
	os.WriteFile(config, []byte(fmt.Sprintf("Host *\n  IdentityFile %s\n  IdentitiesOnly yes\n  BatchMode yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n", key)), 0o600)
	sshCmd := "ssh -F " + config
	ssh := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command("ssh", append([]string{"-F", config, "-p", port}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	// A verdict of the participant's own: refused.
	if out, err := ssh(`{"challenge":"once","seed":1,"passed":true}`, "-o", "RequestTTY=no", alice+"@"+host, "challenge-result"); err == nil || !strings.Contains(out, "keeps only the verdicts its server grades") {
		t.Errorf("a forged verdict: %v\n%s", err, out)
	}
	// A forward no run asked for (the machine's MySQL): refused, and said.
	if out, err := ssh("", "-o", "RequestTTY=no", "-W", env.Svc.Config.MySQLAddr(), alice+"@"+host); err == nil {
		t.Errorf("the door forwarded to %s for a participant with no run: %s", env.Svc.Config.MySQLAddr(), out)
	}

	bin := t.TempDir()
	for name, pkg := range map[string]string{"once": "./challenge/solutions/go/once", "cheats": "./challenge/testdata/cheats"} {
		root, _ := filepath.Abs("../..")
		build := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg)
		build.Dir = root
		if strings.HasPrefix(pkg, "./challenge/testdata") {
			build.Dir, build.Args[len(build.Args)-1] = filepath.Join(root, "challenge"), "./testdata/cheats"
		}
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	grade := func(user string, program ...string) (int, string) {
		cmd := exec.Command(labBin(t), append([]string{"challenge", "run", "once", "--seed", "1", "--duration", "5s", "--workshop", user + "@" + addr, "--"}, program...)...)
		cmd.Env = append(os.Environ(), "LAB_SSH_COMMAND="+sshCmd)
		cmd.Dir = t.TempDir()
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	type result struct {
		code int
		out  string
	}
	honest := make(chan result, 1)
	go func() {
		code, out := grade(alice, filepath.Join(bin, "once"))
		honest <- result{code, out}
	}()
	// While alice's run goes: a second run of hers is refused, and so is a
	// forward her run did not ask for.
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(serveOut.String(), "started a challenge run on the server"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("alice's run never started:\n%s", serveOut.String())
		}
	}
	if out, err := ssh("", "-o", "RequestTTY=no", alice+"@"+host, "challenge-run", "once"); err == nil || !strings.Contains(out, "one at a time") {
		t.Errorf("a second run beside the first: %v\n%s", err, out)
	}
	if out, err := ssh("", "-o", "RequestTTY=no", "-W", env.Svc.Config.MySQLAddr(), alice+"@"+host); err == nil {
		t.Errorf("the door forwarded to %s during alice's run, which did not ask for it: %s", env.Svc.Config.MySQLAddr(), out)
	}
	r := <-honest
	code, out := r.code, r.out
	if code != 0 || !strings.Contains(out, "PASS") || !strings.Contains(out, "kept in room") {
		t.Fatalf("an honest program graded at the workshop: exit %d\n%s\nlab serve:\n%s", code, out, serveOut.String())
	}
	t.Logf("honest:\n%s", out)
	code, out = grade(bob, filepath.Join(bin, "cheats"), "bulk")
	t.Logf("cheat:\n%s", out)
	if code != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(out, "unearned:") {
		t.Errorf("a cheat graded at the workshop: exit %d\n%s", code, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rm, err := room.Existing(ctx, env.Svc.MySQL, env.Svc.Config.MySQL, env.NS, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Close()
	ps, err := rm.Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range ps {
		if v := p.Challenges["once"]; v != nil {
			got[p.Name] = v.Passed
			if !strings.Contains(v.Last, "graded by the workshop's server") {
				t.Errorf("%s's verdict does not say the server graded it: %+v", p.Name, v)
			}
		}
	}
	if len(got) != 2 || !got[alice] || got[bob] {
		t.Errorf("the room keeps %v, want %s passed and %s not", got, alice, bob)
	}
	if log := serveOut.String(); !strings.Contains(log, "a forward to "+env.Svc.Config.MySQLAddr()) || !strings.Contains(log, "graded "+alice) {
		t.Errorf("lab serve's log does not say what it refused and graded:\n%s", log)
	}
	if log := serveOut.String(); strings.Contains(log, "left its queue") {
		t.Errorf("a graded run left its queue:\n%s", log)
	}
}

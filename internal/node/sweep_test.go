package node_test

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	. "github.com/rmlab/lab/internal/node"
)

// lab clean sweeps the nodes folder it is given. A folder there that holds
// sets of its own (a test's LAB_NODES_DIR under CI's) or a set not yet
// claimed has no lock: sweeping it once took the files of running nodes
// from under them (a node "exited while booting" with no output).
func TestSweepRemovesOnlyDeadSetsAndLeavesFoldersWithoutALockAlone(t *testing.T) {
	base := t.TempDir()
	mk := func(parts ...string) string {
		d := filepath.Join(append([]string{base}, parts...)...)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	lock := func(dir string, hold bool) {
		f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if hold {
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return
		}
		f.Close()
	}
	running := mk("labtest123", "tstepsa017") // a test's folder of sets
	lock(running, true)
	os.WriteFile(filepath.Join(running, "out.log"), []byte("booting\n"), 0o600)
	live := mk("rmlab-live")
	lock(live, true)
	dead := mk("rmlab-dead")
	lock(dead, false)
	unclaimed := mk("db-unclaimed")

	removed, err := Sweep(base)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{dead}) {
		t.Errorf("Sweep removed %v, want only %s", removed, dead)
	}
	for _, keep := range []string{filepath.Join(running, "out.log"), live, unclaimed} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s: %v after Sweep, want it kept", keep, err)
		}
	}
	if _, err := os.Stat(filepath.Join(unclaimed, "lock")); err == nil {
		t.Error("Sweep made a lock in a folder its owner had not claimed yet")
	}
}

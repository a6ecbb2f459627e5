package containers

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
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

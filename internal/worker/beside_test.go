package worker

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// lab-worker beside the lab is used only when it is the lab's own build,
// and when it is not, BesideWhy says why (lab doctor prints it): a stale
// one was silently passed over.
func TestALabWorkerBesideIsUsedOnlyFromTheSameBuildAndSaysWhyNot(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		t.Fatalf("the go tool, another Go program: %v", err)
	}
	for _, c := range []struct {
		name, worker string // what lab-worker is: "" none, "same", "script", "go", "noexec"
		used         bool
		why          string
	}{
		{"none beside", "", false, ""},
		{"the same build", "same", true, ""},
		{"another Go program", "go", false, "cmd/go"},
		{"not a Go binary", "script", false, "not a Go program's binary"},
		{"not executable", "noexec", false, "not an executable file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			lab, light := filepath.Join(dir, "lab"), filepath.Join(dir, LightBinary)
			copyFile(t, self, lab, 0o755)
			switch c.worker {
			case "same":
				copyFile(t, self, light, 0o755)
			case "go":
				copyFile(t, goTool, light, 0o755)
			case "script":
				os.WriteFile(light, []byte("#!/bin/sh\n"), 0o755)
			case "noexec":
				copyFile(t, self, light, 0o644)
			}
			got, why := BesideWhy(lab)
			if (got == light) != c.used || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
				t.Errorf("BesideWhy = %s, %q; want lab-worker used %t, why containing %q", got, why, c.used, c.why)
			}
		})
	}
}

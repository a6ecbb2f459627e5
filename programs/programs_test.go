package programs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/worker"
)

// build puts lab and lab-worker, from this checkout, in dir.
func build(t *testing.T, dir string) (lab, light string) {
	t.Helper()
	lab, light = filepath.Join(dir, "lab"), filepath.Join(dir, worker.LightBinary)
	for bin, pkg := range map[string]string{lab: "../cmd/lab", light: "../cmd/lab-worker"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return lab, light
}

func TestLabStartsWorkersWithLabWorkerFromTheSameBuildAndItselfOtherwise(t *testing.T) {
	dir := t.TempDir()
	lab, light := build(t, dir)
	if got := worker.Beside(lab); got != light {
		t.Fatalf("Beside(%s) = %s, want the lab-worker built with it", lab, got)
	}

	// Both binaries run the same programs with the same points.
	for _, bin := range []string{lab, light} {
		out, _ := exec.Command(bin, "worker", "relay", "--help").CombinedOutput()
		for _, pt := range Points()["relay"] {
			if !strings.Contains(string(out), pt) {
				t.Errorf("%s worker relay --help does not list point %s:\n%s", filepath.Base(bin), pt, out)
			}
		}
	}
	out, err := exec.Command(light, "doctor").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "runs only the lab's worker processes") {
		t.Errorf("lab-worker doctor: err %v, output %q; want a refusal naming what it runs", err, out)
	}

	// A lab-worker older than the lab, from a build of changed files or
	// without VCS, is taken for an earlier build's.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(light, old, old); err != nil {
		t.Fatal(err)
	}
	if dirty(t, lab) {
		if got := worker.Beside(lab); got != lab {
			t.Errorf("with lab-worker an hour older than a dirty build, Beside = %s, want the lab itself", got)
		}
	}

	// Something else by that name, or none, and the lab runs its workers itself.
	if err := os.Remove(light); err != nil {
		t.Fatal(err)
	}
	if got := worker.Beside(lab); got != lab {
		t.Errorf("without lab-worker, Beside = %s, want %s", got, lab)
	}
	sh, _ := exec.LookPath("sh")
	data, _ := os.ReadFile(sh)
	if err := os.WriteFile(light, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := worker.Beside(lab); got != lab {
		t.Errorf("with a lab-worker that is not a Go build of this module, Beside = %s, want %s", got, lab)
	}
}

func dirty(t *testing.T, bin string) bool {
	out, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	return strings.Contains(s, "vcs.modified=true") || !strings.Contains(s, "vcs.revision=")
}

func TestEveryProgramIsListedOnceWithPoints(t *testing.T) {
	names := Names()
	if len(names) != len(All) || !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Fatalf("Names() = %v for %d programs", names, len(All))
	}
	for _, p := range All {
		if p.Main == nil || len(p.Points) == 0 {
			t.Errorf("program %s has no entry point or no pause points", p.Kind)
		}
	}
}

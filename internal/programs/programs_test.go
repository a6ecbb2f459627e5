package programs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/programs"
	"github.com/rmlab/lab/internal/worker"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// build puts copies of lab and lab-worker, built once from this checkout
// (labtest), in dir: the test changes and removes them.
func build(t *testing.T, dir string) (lab, light string) {
	t.Helper()
	return labtest.CopyBinaries(t, dir)
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
		for _, pt := range programs.Points()["relay"] {
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
	names := programs.Names()
	if len(names) != len(programs.All) || !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Fatalf("Names() = %v for %d programs", names, len(programs.All))
	}
	for _, p := range programs.All {
		if p.Main == nil || len(p.Points) == 0 {
			t.Errorf("program %s has no entry point or no pause points", p.Kind)
		}
	}
}

func TestEveryProgramsFlagsAreReadFromItsOwnHelp(t *testing.T) {
	for _, p := range programs.All {
		flags, ok := programs.Flags(p.Kind)
		if !ok || len(flags) == 0 {
			t.Errorf("%s: no flags read from its --help", p.Kind)
		}
	}
	if f, _ := programs.Flags("consumer"); !slices.Contains(f, "max-retries") || slices.Contains(f, "name") {
		t.Errorf("consumer's flags %v: want --max-retries, and not the worker layer's --name", f)
	}
	if _, ok := programs.Flags("no-such-program"); ok {
		t.Error("a program that does not exist has flags")
	}
}

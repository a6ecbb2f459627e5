package labtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rmlab/lab/internal/worker"
)

// binaries are the lab's two commands, built from this checkout at most
// once per test process, on first use, into one folder Main deletes.
type binaries struct {
	once      sync.Once
	dir       string
	lab, work string
	err       error
}

// Lab is the path of the lab binary (cmd/lab) built from this checkout,
// with lab-worker (cmd/lab-worker) beside it: the lab starts its workers
// from lab-worker, as an installed lab does. Built once per test process.
func Lab(t testing.TB) string {
	t.Helper()
	lab, _ := Binaries(t)
	return lab
}

// Binaries are the paths of lab and lab-worker, beside each other.
func Binaries(t testing.TB) (lab, labWorker string) {
	t.Helper()
	mustMain(t)
	b := &process.bins
	b.once.Do(b.build)
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.lab, b.work
}

func (b *binaries) build() {
	dir, err := os.MkdirTemp("", "labtest-bin")
	if err != nil {
		b.err = fmt.Errorf("labtest: a folder for the binaries: %w", err)
		return
	}
	b.dir = dir
	// One go build for both: they share most packages.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/rmlab/lab/cmd/lab", "github.com/rmlab/lab/cmd/lab-worker")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.err = fmt.Errorf("labtest: go build ./cmd/lab ./cmd/lab-worker: %v\n%s", err, out)
		return
	}
	b.lab, b.work = filepath.Join(dir, "lab"), filepath.Join(dir, worker.LightBinary)
}

func (b *binaries) remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// CopyBinaries puts copies of lab and lab-worker in dir, lab-worker written
// last (a lab-worker from the same build is never older than its lab), for
// a test that changes or removes them.
func CopyBinaries(t testing.TB, dir string) (lab, labWorker string) {
	t.Helper()
	src, srcWorker := Binaries(t)
	lab, labWorker = filepath.Join(dir, "lab"), filepath.Join(dir, worker.LightBinary)
	for _, c := range [][2]string{{src, lab}, {srcWorker, labWorker}} {
		if err := copyFile(c[0], c[1]); err != nil {
			t.Fatalf("labtest: copy %s: %v", c[0], err)
		}
	}
	return lab, labWorker
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

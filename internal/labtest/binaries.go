package labtest

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/rmlab/lab/internal/worker"
)

// binaries are the lab's two commands, built from this checkout at most
// once per test process, on first use, into a folder the checkout's test
// processes share: go build links again only what changed, so the packages
// of one go test ./... run link the two binaries once between them, not
// once each (about 5 CPU-seconds a package).
type binaries struct {
	once      sync.Once
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
	root, err := moduleRoot()
	if err != nil {
		b.err = err
		return
	}
	// In the user's cache, not the shared temp folder: a folder of a name
	// anyone can guess there could be another user's, holding binaries the
	// tests would run.
	cache, err := os.UserCacheDir()
	if err != nil {
		b.err = fmt.Errorf("labtest: a folder for the binaries (set HOME or XDG_CACHE_HOME): %w", err)
		return
	}
	sum := sha256.Sum256([]byte(root))
	dir := filepath.Join(cache, "rmlab", fmt.Sprintf("labtest-bin-%x", sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.err = fmt.Errorf("labtest: a folder for the binaries: %w", err)
		return
	}
	// One build at a time in the folder: a package's tests may be starting
	// the binaries another's build would replace (go build writes them
	// whole or not at all, and leaves an up-to-date one alone).
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		b.err = fmt.Errorf("labtest: lock the binaries' folder: %w", err)
		return
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		b.err = fmt.Errorf("labtest: lock the binaries' folder: %w", err)
		return
	}
	// One go build for both: they share most packages.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/rmlab/lab/cmd/lab", "github.com/rmlab/lab/cmd/lab-worker")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.err = fmt.Errorf("labtest: go build ./cmd/lab ./cmd/lab-worker: %v\n%s", err, out)
		return
	}
	b.lab, b.work = filepath.Join(dir, "lab"), filepath.Join(dir, worker.LightBinary)
}

// moduleRoot is the folder of this checkout's go.mod, above the test's own.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("labtest: the test's folder: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("labtest: no go.mod above %s", dir)
		}
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

package progress_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rmlab/lab/progress"
)

// TestProgressIsKeptPerNamespaceAndLessonsFolderUnderTheStateDirectory:
// two learners on one account, or an instructor's lessons beside the
// built-in ones, never share a file; $LAB_PROGRESS_FILE overrides.
func TestProgressIsKeptPerNamespaceAndLessonsFolderUnderTheStateDirectory(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv(progress.Env, "")
	paths := map[string]bool{}
	for _, c := range []struct{ ns, dir string }{{"", ""}, {"alice", ""}, {"bob", ""}, {"", "/tmp/workshop"}, {"alice", "/tmp/workshop"}, {"alice", "/tmp/other/workshop"}} {
		p, err := progress.Path(c.ns, c.dir)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(p) != filepath.Join(state, "rmlab") {
			t.Errorf("%+v: %s is not under $XDG_STATE_HOME/rmlab", c, p)
		}
		if paths[p] {
			t.Errorf("%+v shares %s with another namespace or folder", c, p)
		}
		paths[p] = true
	}
	t.Setenv(progress.Env, "/tmp/mine.json")
	if p, _ := progress.Path("alice", "x"); p != "/tmp/mine.json" {
		t.Errorf("LAB_PROGRESS_FILE ignored: %s", p)
	}
}

// TestTheOldProgressFileIsReadSoNobodyLosesTheirPlace: the built-in
// lessons' progress used to live in the config directory.
func TestTheOldProgressFileIsReadSoNobodyLosesTheirPlace(t *testing.T) {
	home := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv(progress.Env, "")
	old := filepath.Join(home, "config", "rmlab", "progress.json")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte(`{"last":"idem-business-key","lessons":{"idem-business-key":{"step":3}}}`), 0o644)
	p, _ := progress.Path("", "")
	f, err := progress.Load(p)
	if err != nil || f.Last != "idem-business-key" || f.Of("idem-business-key").Step != 3 {
		t.Fatalf("got %+v, %v", f, err)
	}
	if err := progress.Write(p, []byte(`{"lessons":{}}`)); err != nil {
		t.Fatal(err)
	}
	if f, _ := progress.Load(p); f.Last != "" {
		t.Errorf("the new file, once written, must win over the old one: %+v", f)
	}
}

package progress_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rmlab/lab/internal/progress"
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

func TestTheLessonsFoldersTheLabWasGivenAreRememberedOnceAndForgotten(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b, a} {
		if err := progress.RememberLessons(d); err != nil {
			t.Fatal(err)
		}
	}
	got, err := progress.LessonsFolders()
	if err != nil || len(got) != 2 || got[0] != a || got[1] != b {
		t.Fatalf("folders %v (%v), want [%s %s] once each", got, err, a, b)
	}
	if err := progress.ForgetLessons([]string{a}); err != nil {
		t.Fatal(err)
	}
	if got, _ := progress.LessonsFolders(); len(got) != 1 || got[0] != b {
		t.Fatalf("after forgetting %s: %v", a, got)
	}
}

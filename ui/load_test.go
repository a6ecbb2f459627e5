package ui

import (
	tea "charm.land/bubbletea/v2"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/steps"
)

// bothLedgers ends a test lesson the way every lesson that runs must end:
// with an unsafe and a safe ledger (literal figures need no service).
const bothLedgers = "\n```ledger variant=unsafe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n"

// An instructor's directory with one broken file still opens: the good
// lessons are listed and the status line names the broken file and line.
func TestTheScreenOpensWithTheLessonsThatLoadedAndNamesTheBrokenFile(t *testing.T) {
	setEnv(t, progress.Env, filepath.Join(t.TempDir(), "progress.json"))
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "01-fine.md"), []byte("# Fine\n\n```lesson\nid: fine\nnumber: 1\npart: outbox\n```\n\n```sql\nSELECT 1;\n```\n"+bothLedgers), 0o644)
	os.WriteFile(filepath.Join(dir, "02-bad.md"), []byte("# Bad\n\n```lesson\nid: bad\nnumber: 2\npart: outbox\n```\n\n```sql sesion=A\nSELECT 1;\n```\n"), 0o644)
	a, err := newApp(context.Background(), Options{Env: &steps.Env{}, Lang: "en", LessonsDir: dir})
	if err != nil {
		t.Fatalf("the screen refused to open: %v", err)
	}
	t.Cleanup(a.shutdown)
	if got := a.lessons["en"]; len(got) != 1 || got[0].ID != "fine" {
		t.Fatalf("lessons %v, want only fine", got)
	}
	if !a.statusBad || !strings.Contains(a.status, "1 lesson file(s) did not load") || !strings.Contains(a.status, "02-bad.md:9") {
		t.Fatalf("status %q (bad=%v) does not name the broken file", a.status, a.statusBad)
	}

	// With nothing loadable the screen still refuses, with the reason.
	os.Remove(filepath.Join(dir, "01-fine.md"))
	if _, err := newApp(context.Background(), Options{Env: &steps.Env{}, Lang: "en", LessonsDir: dir}); err == nil || !strings.Contains(err.Error(), "02-bad.md:9") {
		t.Fatalf("err %v, want the broken file named", err)
	}
}

// A step whose attributes are longer than the pane (a reset listing its
// queues and exchanges) wraps instead of losing its end at the border.
func TestALongStepTitleWrapsInsideTheLessonPane(t *testing.T) {
	setEnv(t, progress.Env, filepath.Join(t.TempDir(), "progress.json"))
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "01-long.md"), []byte("# Long\n\n```lesson\nid: long\nnumber: 1\npart: outbox\n```\n\n"+
		"```reset db=blog_outbox_lab,blog_idempotency_lab queues=orders.overwrite,orders.versioned,orders.audit exchanges=outbox.events,last.exchange.shown\n```\n"+bothLedgers), 0o644)
	a, err := newApp(context.Background(), Options{Env: &steps.Env{}, Lang: "en", LessonsDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.shutdown)
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	v := plainView(a.lesson.View())
	if !strings.Contains(v, "orders.audit") { // attributes are sorted: queues= comes last
		t.Fatalf("the end of the step title is cut off:\n%s", v)
	}
}

package cleaner_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/services"
)

const lesson = "# Mine\n\n```lesson\nid: mine\nnumber: 1\npart: broker\n```\n\n" +
	"```declare\nexchange lanes.x type=fanout\nqueue lanes.q\nbind lanes.q lanes.x\n```\n\n" +
	"```ledger variant=unsafe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n\n" +
	"```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n"

// An instructor's lessons replayed in lanes (alice_r2) and killed left
// queues only those files name. lab clean, given no --lessons and no
// management API, still names them: it remembers every folder the lab was
// given. A folder since deleted is forgotten, and said.
func TestCleanNamesTheQueuesOfEveryLessonsFolderTheLabWasGiven(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "01-mine.md"), []byte(lesson), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := &services.Services{Config: services.Config{AMQP: "amqp://guest:guest@127.0.0.1:1/"}}
	var out strings.Builder
	q, _ := cleaner.New(context.Background(), svc, "", &out).BrokerNames(services.Names{NS: "alice_r2"})
	if slices.Contains(q, "lanes.q_alice_r2") {
		t.Fatalf("a folder never given is named: %v", q)
	}
	if err := progress.RememberLessons(dir); err != nil {
		t.Fatal(err)
	}
	q, x := cleaner.New(context.Background(), svc, "", &out).BrokerNames(services.Names{NS: "alice_r2"})
	if !slices.Contains(q, "lanes.q_alice_r2") || !slices.Contains(x, "lanes.x_alice_r2") {
		t.Fatalf("queues %v, exchanges %v: want lanes.q_alice_r2 and lanes.x_alice_r2", q, x)
	}
	os.RemoveAll(dir)
	out.Reset()
	cleaner.New(context.Background(), svc, "", &out)
	if !strings.Contains(out.String(), dir) || !strings.Contains(out.String(), "no longer exist") {
		t.Errorf("a folder that is gone is not said: %q", out.String())
	}
	if got, _ := progress.LessonsFolders(); len(got) != 0 {
		t.Errorf("a folder that is gone is still remembered: %v", got)
	}
}

package labs

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/cleaner"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/internal/services"
)

var update = flag.Bool("update", false, "rewrite "+cleaner.BuiltinFile)

// The cleaner reads no lesson: it takes the built-in lessons' queues and
// exchanges from a list the loader writes. A lesson that declares a new
// queue must land with the list, or lab clean (and every test's cleanup,
// without the management API) would leave that queue behind.
func TestTheCleanersListOfBuiltInNamesIsCurrent(t *testing.T) {
	var n cleaner.Names
	n.Queues, n.Exchanges = declared(builtinLessons())
	if len(n.Queues) == 0 || len(n.Exchanges) == 0 {
		t.Fatalf("the built-in lessons declare no queue or no exchange: %v %v", n.Queues, n.Exchanges)
	}
	want := cleaner.FormatBuiltin(n)
	if *update {
		if err := os.WriteFile(filepath.Join("..", cleaner.BuiltinFile), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := cleaner.FormatBuiltin(cleaner.Builtin()); got != want {
		t.Errorf("%s is stale: run go test ./labs -run %s -update\nhas:\n%s\nwant:\n%s", cleaner.BuiltinFile, t.Name(), got, want)
	}
}

const laneLesson = "# Mine\n\n```lesson\nid: mine\nnumber: 1\npart: broker\n```\n\n" +
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
	if err := os.WriteFile(filepath.Join(dir, "01-mine.md"), []byte(laneLesson), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := BrokerNames(""); slices.Contains(n.Queues, "lanes.q") {
		t.Fatalf("a folder never given is named: %v", n.Queues)
	}
	if err := progress.RememberLessons(dir); err != nil {
		t.Fatal(err)
	}
	n := BrokerNames("")
	if !slices.Contains(n.Queues, "lanes.q") || !slices.Contains(n.Exchanges, "lanes.x") || !slices.Contains(n.Queues, "orders") {
		t.Fatalf("queues %v, exchanges %v: want lanes.q, lanes.x and the built-in orders", n.Queues, n.Exchanges)
	}
	os.RemoveAll(dir)
	n = BrokerNames("")
	if !slices.Contains(n.Gone, dir) || slices.Contains(n.Queues, "lanes.q") {
		t.Errorf("a folder that is gone: Gone %v, queues %v", n.Gone, n.Queues)
	}
	if got, _ := progress.LessonsFolders(); len(got) != 0 {
		t.Errorf("a folder that is gone is still remembered: %v", got)
	}
	svc := &services.Services{Config: services.Config{AMQP: "amqp://guest:guest@127.0.0.1:1/"}}
	var out strings.Builder
	cleaner.New(context.Background(), svc, n, &out).Close()
	if !strings.Contains(out.String(), dir) || !strings.Contains(out.String(), "no longer exist") {
		t.Errorf("the cleaner does not say a folder is gone: %q", out.String())
	}
}

// The folder given now reports its load error; the built-in names still go.
func TestBrokerNamesReportsTheGivenFolderThatDoesNotLoad(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "01-bad.md"), []byte("# Bad\n\n```lesson\nnumber: x\n```\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := BrokerNames(dir)
	if n.Err == nil || !slices.Contains(n.Queues, "orders") {
		t.Errorf("err %v, queues %v: want the folder's load error and the built-in names", n.Err, n.Queues)
	}
}

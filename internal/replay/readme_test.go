package replay_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/replay"
	"github.com/rmlab/lab/labs"
)

// TestTheReadmesDeadLetterExampleRunsAsWritten takes the worked
// dead-lettering example out of labs/README.md, as an instructor would copy
// it, and replays it on the real services: a dead-letter queue declared, a
// message failed by a real consumer process, x-death checked.
func TestTheReadmesDeadLetterExampleRunsAsWritten(t *testing.T) {
	doc, err := os.ReadFile("../../labs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Dead-lettering, worked")
	if !ok {
		t.Fatal("labs/README.md has no section \"Dead-lettering, worked\"")
	}
	_, rest, _ = strings.Cut(rest, "````markdown\n")
	example, _, ok := strings.Cut(rest, "````")
	if !ok {
		t.Fatal("the worked example's ````markdown block is not closed")
	}
	src := "# Dead letters\n\n```lesson\nid: readme-dead-letter\nnumber: 90\npart: broker\nneeds: quorum-queues\n```\n\n" +
		example + "\n```ledger variant=unsafe expect=lost\nintended: 1\napplied: 0\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n"
	p := filepath.Join(t.TempDir(), "90-dead-letter.md")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := labs.LoadFile(p)
	if err != nil {
		t.Fatalf("the README's example does not load:\n%v", err)
	}
	labEnv(t).Lessons(labs.BrokerNames(filepath.Dir(p))) // its queues and exchanges, for the cleanup
	e := env(t)
	lr := replay.Lesson(context.Background(), e, l, replay.Options{Caps: e.Svc.Info.Caps(), StepTimeout: time.Minute})
	if !lr.Passed {
		t.Fatalf("the README's example fails: %s", lr.Why)
	}
	var sawDeath bool
	for _, s := range lr.Steps {
		sawDeath = sawDeath || strings.Contains(s.Observed, "x-death=[orders rejected 1]")
	}
	if !sawDeath {
		t.Error("no step showed x-death=[orders rejected 1]")
	}
}

// TestAWaitShowsWhatTheWorkerPrintedBeforeIt: a worker that finished while
// another step ran; the wait after it shows its whole output, so an expect
// never passes on text the learner did not see.
func TestAWaitShowsWhatTheWorkerPrintedBeforeIt(t *testing.T) {
	src := "# W\n\n```lesson\nid: wait-shows-all\nnumber: 91\npart: idempotency\n```\n\n```reset db=blog_idempotency_lab\n```\n\n" +
		"```spawn name=c1 program=consumer\n--strategy one-tx --event event-001 --key order:42:paid --user 7 --amount 10\n```\n\n" +
		"```sleep for=2s\n```\n\n```wait worker=c1 until=exit\n```\n\n```expect\ncontains received\n```\n" +
		"\n```ledger variant=unsafe expect=lost\nintended: 1\napplied: 0\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n"
	p := filepath.Join(t.TempDir(), "91-wait.md")
	os.WriteFile(p, []byte(src), 0o644)
	l, err := labs.LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	e := env(t)
	lr := replay.Lesson(context.Background(), e, l, replay.Options{StepTimeout: time.Minute})
	if !lr.Passed {
		t.Fatalf("%s", lr.Why)
	}
	for _, s := range lr.Steps {
		if s.Kind == "wait" && !strings.Contains(s.Observed, "received") {
			t.Errorf("the wait shows %q, without what the worker printed before it", s.Observed)
		}
	}
}

// TestAWorkshopsWorkerCapRefusesOneMoreWorkerAndSaysWhy: with a cap of one
// live worker, the lesson's second spawn fails with the reason.
func TestAWorkshopsWorkerCapRefusesOneMoreWorkerAndSaysWhy(t *testing.T) {
	l, err := labs.LoadFile("../../ui/testdata/worker-lessons/en/02-fixture-workers.md")
	if err != nil {
		t.Fatal(err)
	}
	labEnv(t).Lessons(labs.BrokerNames("../../ui/testdata/worker-lessons"))
	e := env(t)
	capped := *e
	capped.MaxWorkers = 1
	lr := replay.Lesson(context.Background(), &capped, l, replay.Options{StepTimeout: time.Minute})
	if lr.Passed || !strings.Contains(lr.Why, "1 worker processes are already running, this lab's limit") {
		t.Fatalf("passed %t: %s", lr.Passed, lr.Why)
	}
}

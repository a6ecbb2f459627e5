package labs_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rmlab/lab/labs"
)

// bothLedgers ends a test lesson the way every lesson that runs must end:
// with an unsafe and a safe ledger (literal figures need no service).
const bothLedgers = "\n```ledger variant=unsafe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n"

func TestEveryLessonExistsInBothLanguagesWithTheSameSteps(t *testing.T) {
	en, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	zh, err := labs.Builtin("zh")
	if err != nil {
		t.Fatal(err)
	}
	if len(en) != len(zh) {
		t.Fatalf("%d English lessons, %d Chinese", len(en), len(zh))
	}
	for i := range en {
		e, z := en[i], zh[i]
		if e.ID != z.ID || e.Number != z.Number || e.Part != z.Part || e.ExplainOnly != z.ExplainOnly {
			t.Errorf("lesson %d: en %s/%d/%s vs zh %s/%d/%s", i, e.ID, e.Number, e.Part, z.ID, z.Number, z.Part)
			continue
		}
		if !reflect.DeepEqual(e.Tables, z.Tables) || !reflect.DeepEqual(e.Queues, z.Queues) || !reflect.DeepEqual(e.Needs, z.Needs) {
			t.Errorf("%s: tables, queues or needs differ between en and zh", e.ID)
		}
		if err := labs.SameSteps(e, z); err != nil {
			t.Errorf("%s: %v", e.ID, err)
		}
	}
}

func TestLessonNumbersAndIDsAreStable(t *testing.T) {
	en, _ := labs.Builtin("en")
	// Ids and numbers are fixed by the issues: instructors and CI name them.
	want := map[string]int{
		"idem-first-processing": 1, "idem-business-key": 2, "idem-payload-conflict": 3,
		"idem-separate-transactions": 4, "idem-concurrent-insert": 5, "idem-redis-setnx": 6,
		"idem-out-of-order": 7, "idem-external-effects": 8,
		"broker-three-links": 11, "broker-confirm-vs-route": 12, "broker-lost-confirm": 13,
		"broker-durability": 14, "broker-ack-after-commit": 15, "broker-delivery-tags": 16,
		"broker-rocketmq-boundary": 17, "broker-poison-message": 18,
		"outbox-dual-write": 21, "outbox-claim-skip-locked": 22, "outbox-lease-token": 23,
		"outbox-crash-after-publish": 24, "outbox-lost-confirm": 25, "outbox-stale-worker": 26,
		"outbox-retry-and-dead": 27, "outbox-ordering": 28, "outbox-reconciliation": 29,
		"outbox-at-least-once": 30,
	}
	seen := map[string]bool{}
	for _, l := range en {
		if n, ok := want[l.ID]; ok && n != l.Number {
			t.Errorf("%s is number %d, want %d", l.ID, l.Number, n)
		}
		seen[l.ID] = true
	}
	for id := range want {
		if !seen[id] {
			t.Errorf("lesson %s is missing", id)
		}
	}
}

// A malformed lesson fails with file:line and what is wrong.
func TestMalformedLessonReportsFileLineAndProblem(t *testing.T) {
	head := "# T\n\n```lesson\nid: x\nnumber: 1\npart: idempotency\n```\n\n"
	cases := []struct {
		name, src, want string
	}{
		{"no lesson block", "# T\n\n```sql\nSELECT 1;\n```\n", "bad.md:1: no ```lesson block"},
		{"unknown lesson key", "# T\n\n```lesson\nid: x\ncolour: red\n```\n", "bad.md:5: unknown lesson key \"colour\""},
		{"bad part", "# T\n\n```lesson\nid: x\nnumber: 1\npart: kafka\n```\n", "bad.md:6: part \"kafka\""},
		{"unknown sql attribute", head + "```sql sesion=A\nSELECT 1;\n```\n", "bad.md:9: sql step has unknown attribute \"sesion\""},
		{"empty sql", head + "```sql\n```\n", "bad.md:9: sql step has no statement"},
		{"on-error misspelt", head + "```sql error=1062 on-error=go-on\nSELECT 1;\n```\n", "bad.md:9: on-error=go-on: write on-error=continue"},
		{"offset not a place in a stream", head + "```consume queue=orders offset=soon prefetch=1\n```\n", "bad.md:9: offset=soon: write first, last, next"},
		{"offset without prefetch", head + "```consume queue=orders offset=first\n```\n", "bad.md:9: offset= reads a stream, which a consumer reads with prefetch=N"},
		{"settle not a duration", head + "```resume worker=c1 settle=long\n```\n", "bad.md:9: settle=\"long\" is not a duration"},
		{"on-error=continue naming no error", head + "```sql on-error=continue\nSELECT 1;\n```\n", "bad.md:9: on-error=continue names no error to carry on after"},
		{"unknown expectation", head + "```sql\nSELECT 1;\n```\n\n```expect\nequals 1\n```\n", "bad.md:14: unknown expectation \"equals\""},
		{"missing sql file", head + "```sql file=nope.sql\n```\n", "bad.md:9: no embedded SQL file \"nope.sql\""},
		{"ledger without variant", head + "```ledger\nintended: 1\napplied: 1\n```\n", "bad.md:9: ledger needs variant="},
		{"when names no choice", head + "```sql when=kill:early\nSELECT 1;\n```\n", "bad.md:9: when=kill:early names no choice step"},
		{"unclosed quote", head + "```ledger variant=safe label=\"x\nintended: 1\napplied: 1\n```\n", "bad.md:9: ledger block: unclosed quote"},
		{"spawn without program", head + "```spawn name=c1\n```\n", "bad.md:9: spawn step needs program="},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.md")
			if err := os.WriteFile(p, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := labs.LoadFile(p)
			if err == nil {
				t.Fatalf("loaded a malformed lesson")
			}
			got := strings.ReplaceAll(err.Error(), dir+"/", "")
			if !strings.Contains(got, c.want) {
				t.Fatalf("error %q does not contain %q", got, c.want)
			}
		})
	}
}

func TestLessonFromOutsideTheBinaryLoads(t *testing.T) {
	dir := t.TempDir()
	src := "# Mine\n\n```lesson\nid: my-lesson\nnumber: 99\npart: outbox\n```\n\nProse.\n\n```reset db=blog_outbox_lab\n```\n\n```sql\nSELECT 1;\n```\n" + bothLedgers
	if err := os.WriteFile(filepath.Join(dir, "99-mine.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ls, err := labs.LoadDir(dir, "en")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].ID != "my-lesson" || len(ls[0].Steps()) != 4 || ls[0].Blocks[0].Prose == "" {
		t.Fatalf("got %+v", ls)
	}
	if ls[0].Steps()[1].Line != 14 {
		t.Errorf("sql step line %d, want 14", ls[0].Steps()[1].Line)
	}
}

// One broken file in an instructor's directory leaves the others loaded and
// names itself with file:line; a repeated id leaves the second file out.
func TestABrokenLessonFileLeavesTheOthersLoaded(t *testing.T) {
	dir := t.TempDir()
	good := "# Good\n\n```lesson\nid: good-one\nnumber: 1\npart: outbox\n```\n\n```sql\nSELECT 1;\n```\n" + bothLedgers
	files := map[string]string{
		"01-good.md":  good,
		"02-bad.md":   "# Bad\n\n```lesson\nid: bad-one\nnumber: 2\npart: outbox\n```\n\n```sql sesion=A\nSELECT 1;\n```\n",
		"03-again.md": strings.Replace(good, "number: 1", "number: 3", 1),
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ls, err := labs.LoadDir(dir, "en")
	if len(ls) != 1 || ls[0].ID != "good-one" {
		t.Fatalf("loaded %d lessons, want only good-one", len(ls))
	}
	var fe labs.FileErrors
	if !errors.As(err, &fe) || len(fe) != 2 {
		t.Fatalf("want two file errors, got %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"02-bad.md:9: sql step has unknown attribute \"sesion\"", "03-again.md:3: lesson id good-one is also used by"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
}

// Lesson 5's race is a snapshot read, not step order: B's check of the
// keyless table runs after A's write (it used to run before, so the
// duplicate followed from the lesson's own serial order).
func TestLessonFivesCheckRunsAfterTheOtherSessionsWrite(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		ls, err := labs.Builtin(lang)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range ls {
			if l.ID != "idem-concurrent-insert" {
				continue
			}
			aWrite, bCheck := -1, -1
			for i, s := range l.Steps() {
				nokey := strings.Contains(s.Body, "consumed_operation_nokey")
				if s.Attrs["session"] == "A" && nokey && strings.Contains(s.Body, "INSERT") && aWrite < 0 {
					aWrite = i
				}
				if s.Attrs["session"] == "B" && nokey && strings.Contains(s.Body, "SELECT COUNT") && bCheck < 0 {
					bCheck = i
				}
			}
			if aWrite < 0 || bCheck < aWrite {
				t.Errorf("%s: B checks at step %d, A writes at step %d", lang, bCheck, aWrite)
			}
		}
	}
}

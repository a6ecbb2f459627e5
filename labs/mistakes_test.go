package labs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/labs"
)

// head is a lesson's first 11 lines: its block ends at line 8, the reset
// step starts at line 10, and a mistake's block starts at line 13.
const head = "# T\n\n```lesson\nid: t\nnumber: 1\npart: idempotency\ntable: blog_idempotency_lab points_account\n```\n\n```reset db=blog_idempotency_lab\n```\n\n"

// TestEveryMistakeAnInstructorMadeIsCaughtAtLoadWithFileLineAndFix feeds
// the loader each mistake an instructor's three lessons hit, all of which
// used to pass silently or fail far from the cause, and wants the file, the
// line and the fix in the message.
func TestEveryMistakeAnInstructorMadeIsCaughtAtLoadWithFileLineAndFix(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string
	}{
		{"a statement's verb after a resume", head + "```spawn name=c1 program=consumer pause-at=received\n--strategy one-tx\n```\n\n```wait worker=c1 until=received\n```\n\n```resume worker=c1 settle=5s\n```\n\n```expect\naffected 1\n```\n" + bothLedgers,
			[]string{"affected reads the rows a statement changed, which a resume step does not report"}},
		{"an elapsed no statement can reach", head + "```sql\nUPDATE points_account SET points=points+1 WHERE user_id=7;\n```\n\n```expect\nelapsed < 0s\n```\n" + bothLedgers,
			[]string{"t.md:18:", "every statement takes 0s or more", "comes out the same whatever the server did"}},
		{"an elapsed no statement can miss", head + "```sql\nUPDATE points_account SET points=points+1 WHERE user_id=7;\n```\n\n```expect\nelapsed >= 0s\n```\n" + bothLedgers,
			[]string{"t.md:18:", "every statement takes 0s or more", "name a time the answer could miss"}},
		{"a typo in a step kind is not prose", head + "```expcet\nok\n```\n" + bothLedgers,
			[]string{"t.md:13:", "```expcet is not a step kind (did you mean expect?)", "give a prose block a language such as text"}},
		{"sqll is not prose either", head + "```sqll\nSELECT 1;\n```\n" + bothLedgers,
			[]string{"t.md:13:", "(did you mean sql?)"}},
		{"an unknown variable is not sent as text", head + "```choice name=first\nmark: mark first\npoints: points first\n```\n\n```sql\nSELECT '${frist}';\n```\n" + bothLedgers,
			[]string{"t.md:18:", "${frist} would be sent as it is", "(did you mean first?)"}},
		{"an unknown pause point", head + "```spawn name=c1 program=consumer pause-at=after-comit\n--strategy one-tx\n```\n" + bothLedgers,
			[]string{"t.md:13:", "consumer never pauses there (did you mean after-commit?)", "lab worker consumer --help"}},
		{"a wait for a point the program never reaches", head + "```spawn name=c1 program=consumer\n--strategy one-tx\n```\n\n```wait worker=c1 until=after-claim\n```\n" + bothLedgers,
			[]string{"t.md:17:", "never reaches that point", "or until=exit"}},
		{"no safe ledger", head + "```ledger variant=unsafe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n",
			[]string{"t.md:3:", "no ledger variant=safe", "ends with the unsafe and the safe ledger"}},
		{"a ledger without expect= would never fail", head + "```ledger variant=unsafe\nintended: 1\napplied: 0\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n",
			[]string{"t.md:13:", "ledger has no expect=", "a ledger without one never fails"}},
		{"a safe ledger that expects a loss", head + "```ledger variant=unsafe expect=lost\nintended: 1\napplied: 0\n```\n\n```ledger variant=safe expect=lost\nintended: 1\napplied: 0\n```\n",
			[]string{"t.md:18:", "variant=safe expect=\"lost\"", "expect=\"applied once\""}},
		{"a wait that ignores a failing worker's code says exit= only with until=exit", head + "```spawn name=c1 program=consumer\n--strategy one-tx\n```\n\n```wait worker=c1 until=after-commit exit=1\n```\n" + bothLedgers,
			[]string{"t.md:17:", "goes with until=exit"}},
		{"a typo in needs: is not a missing server capability", strings.Replace(head, "part: idempotency\n", "part: idempotency\nneeds: skip-lock\n", 1) + bothLedgers,
			[]string{"t.md:7:", "needs: skip-lock is not a capability (did you mean skip-locked?)", "lab doctor"}},
		{"a missing closing fence swallows the next step", head + "```publish channel=pub exchange=orders key=k\n{\"id\":1}\n\n```expect\nok\n```\n" + bothLedgers,
			[]string{"t.md:16:", "inside the publish channel=pub exchange=orders key=k block that starts at line 13", "close it before this line"}},
		{"a wrong database lists the valid ones", head + "```sql db=blog_idempotency\nSELECT 1;\n```\n" + bothLedgers,
			[]string{"t.md:13:", "(did you mean blog_idempotency_lab?)", "use blog_idempotency_lab or blog_outbox_lab"}},
		{"a table the schemas do not create", strings.Replace(head, "points_account", "point_account", 1) + bothLedgers,
			[]string{"t.md:7:", "has no table point_account (did you mean points_account?)"}},
		{"a kill of a worker never spawned", head + "```spawn name=c1 program=consumer\n--strategy one-tx\n```\n\n```kill worker=c2\n```\n" + bothLedgers,
			[]string{"t.md:17:", "no earlier spawn step starts a worker named c2 (did you mean c1?)", "the workers spawned before it are c1"}},
		{"affected after a publish reads nothing the publish fills", head + "```publish channel=pub exchange=orders key=k confirm\n{}\n```\n\n```expect\nconfirm ack\nnot affected 1\n```\n" + bothLedgers,
			[]string{"t.md:19:", "affected reads the rows a statement changed, which a publish step does not report", "after publish, check", "confirm"}},
		{"rows after a declare", head + "```declare\nqueue orders\n```\n\n```expect\nrows 0\n```\n" + bothLedgers,
			[]string{"t.md:18:", "rows reads result rows, which a declare step does not report"}},
		{"waiting after a worker", head + "```spawn name=c1 program=consumer\n--strategy one-tx\n```\n\n```wait worker=c1 until=exit\n```\n\n```expect\nnot waiting\n```\n" + bothLedgers,
			[]string{"t.md:21:", "waiting reads a SQL session that can block, which a wait step does not report"}},
		{"a fact the step does not report", head + "```spawn name=c1 program=consumer\n--strategy one-tx\n```\n\n```wait worker=c1 until=exit\n```\n\n```expect\nnot fact exti 0\n```\n" + bothLedgers,
			[]string{"t.md:21:", "reports no fact \"exti\" (did you mean exit?)"}},
		{"a verb on the step a path checks", head + "```choice name=mode\na: a\nb: b\n```\n\n```sql\nSELECT 1;\n```\n\n```declare when=mode:b\nqueue orders\n```\n\n```expect\nrows 1\n```\n" + bothLedgers,
			[]string{"t.md:27:", "which a declare step does not report"}},
		{"a queue gone that was never declared", head + "```declare\nqueue orders.transient durable=false\n```\n\n```broker-restart\norders.transiet gone\n```\n" + bothLedgers,
			[]string{"t.md:18:", "no declare step before this one declares queue orders.transiet (did you mean orders.transient?)"}},
		{"a restart that skips without an own broker or broker control", head + "```declare\nqueue orders\n```\n\n```broker-restart\norders ready 0\n```\n" + bothLedgers,
			[]string{"t.md:17:", "add needs: own-broker|broker-control"}},
		{"every predict's answer sits first", head + "```predict name=a prompt=\"A?\" answer=yes\nyes: yes\nno: no\n```\n\n```predict name=b prompt=\"B?\" answer=more\nmore: more\nfewer: fewer\n```\n" + bothLedgers,
			[]string{"t.md:3:", "every predict of lesson t has its answer as the first option"}},
		{"an unknown attribute", head + "```sql sesion=A\nSELECT 1;\n```\n" + bothLedgers,
			[]string{"t.md:13:", "(did you mean session?)", "allowed: session"}},
		{"a dead-letter exchange no step declares", head + "```declare\nqueue orders x-dead-letter-exchange=orders.dlx\n```\n" + bothLedgers,
			[]string{"t.md:14:", "no declare step declares exchange orders.dlx", "drops a dead-lettered message silently", "add `exchange orders.dlx type=fanout`"}},
		{"a bind to an exchange no step declares", head + "```declare\nqueue orders\nbind orders orders.back\n```\n" + bothLedgers,
			[]string{"t.md:15:", "no declare step declares exchange orders.back", "add `exchange orders.back type=…`"}},
		{"an argument the queue type ignores", head + "```declare\nqueue orders x-delivery-limit=3\n```\n" + bothLedgers,
			[]string{"t.md:14:", "queue orders type=classic x-delivery-limit=3", "only quorum queues count deliveries", "declare type=quorum"}},
		{"an argument the queue type refuses", head + "```declare\nqueue orders type=quorum x-overflow=reject-publish-dlx\n```\n" + bothLedgers,
			[]string{"t.md:14:", "quorum queues refuse reject-publish-dlx", "use reject-publish"}},
		{"an argument a stream refuses", head + "```declare\nqueue orders type=stream x-message-ttl=5s\n```\n" + bothLedgers,
			[]string{"t.md:14:", "queue orders type=stream x-message-ttl=5s", "streams keep every message", "use type=quorum or classic"}},
		{"a dead-letter strategy on a classic queue", head + "```declare\nqueue orders x-dead-letter-strategy=at-least-once\n```\n" + bothLedgers,
			[]string{"t.md:14:", "only quorum queues have a dead-letter strategy", "declare type=quorum"}},
		{"an alternate exchange no step declares", head + "```declare\nexchange orders type=direct alternate-exchange=orders.unrouted\n```\n" + bothLedgers,
			[]string{"t.md:14:", "no declare step declares exchange orders.unrouted", "drops an unroutable message silently"}},
		{"the step's own attribute written as a worker flag", head + "```spawn name=c1 program=consumer\n--queue orders --strategy one-tx --pause-at received\n```\n" + bothLedgers,
			[]string{"t.md:14:", "--pause-at is the step's own attribute", "spawn pause-at=… on the fence line"}},
		{"one session awaited twice", head + "```await sessions=B,B\n```\n" + bothLedgers,
			[]string{"t.md:13:", "names B twice"}},
		{"sessions= with one session", head + "```await sessions=B\n```\n" + bothLedgers,
			[]string{"t.md:13:", "name two or more (one is session=NAME)"}},
		{"a worker flag that does not exist", head + "```spawn name=c1 program=consumer\n--queue orders --strategy one-tx --max-retry 3\n```\n" + bothLedgers,
			[]string{"t.md:14:", "--max-retry is not one of its flags (did you mean --max-retries?)", "lab worker consumer --help"}},
		{"worker flags the program refuses together", head + "```spawn name=c1 program=consumer\n--queue orders --strategy one-tx --max-retries 3\n```\n" + bothLedgers,
			[]string{"t.md:13:", "--max-retries needs --park-queue"}},
		{"a paragraph of a path no choice has", head + "<!-- when=fix:sac -->\nOnly on that path.\n\n```choice name=fix\nsingle: one\nby-order: two\n```\n\n" + bothLedgers,
			[]string{"when=fix:sac", `"sac" is not an option of choice fix`}},
		{"a header the queue's type never sets", head + "```declare\nqueue orders\n```\n\n```consume queue=orders count=1\n```\n\n```expect\nheader x-delivery-count 1\n```\n" + bothLedgers,
			[]string{"t.md:21:", "queue orders is a classic queue, which never sets x-delivery-count", "declare the queue type=quorum"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := labs.Parse("t.md", []byte(c.src))
			if err == nil {
				t.Fatalf("loaded without a problem:\n%s", c.src)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the message lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestEveryProblemOfAFileIsReportedNotOnlyTheFirst: an instructor fixes a
// file after one check, not one mistake per run.
func TestEveryProblemOfAFileIsReportedNotOnlyTheFirst(t *testing.T) {
	src := head + "```expcet\nok\n```\n\n```sql db=blog_outbox\nSELECT 1;\n```\n\n```kill worker=c1\n```\n"
	_, err := labs.Parse("t.md", []byte(src))
	var ps labs.Problems
	if err == nil || !errorsAs(err, &ps) || len(ps) < 4 {
		t.Fatalf("want the kind typo, the database, the worker and the ledgers, got:\n%v", err)
	}
	for i, w := range []string{"t.md:3:", "t.md:13:", "t.md:17:", "t.md:21:"} {
		if !strings.HasPrefix(ps[i].Error(), w) {
			t.Errorf("problem %d is %q, want it at %s (in line order)", i, ps[i], w)
		}
	}
}

func errorsAs(err error, ps *labs.Problems) bool {
	p, ok := err.(labs.Problems)
	*ps = p
	return ok
}

// TestAFolderPairsTranslationsChecksThemAndSkipsNotes: a Chinese lesson
// whose steps differ from the English one is left out with both places
// named; a lesson id used twice names both lines; a Markdown file with no
// lesson block (notes) is skipped, not an error.
func TestAFolderPairsTranslationsChecksThemAndSkipsNotes(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "en"), 0o755)
	os.MkdirAll(filepath.Join(dir, "zh"), 0o755)
	en := head + "```sql\nSELECT 1;\n```\n" + bothLedgers
	os.WriteFile(filepath.Join(dir, "en", "01-t.md"), []byte(en), 0o644)
	os.WriteFile(filepath.Join(dir, "zh", "01-t.md"), []byte(strings.Replace(en, "SELECT 1;", "SELECT 2;", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "en", "02-again.md"), []byte(strings.Replace(en, "number: 1", "number: 2", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "en", "notes.md"), []byte("# Notes for the workshop\n\n```sql\nSELECT 'not a step';\n```\n"), 0o644)

	r := labs.Check(dir)
	all := ""
	for _, p := range r.Problems {
		all += p.Error() + "\n"
	}
	for _, w := range []string{
		filepath.Join(dir, "zh", "01-t.md") + ":13: step 2 (sql) differs from the English one at " + filepath.Join(dir, "en", "01-t.md") + `:13 (sql): body line 1 is "SELECT 2;", the English "SELECT 1;"`,
		filepath.Join(dir, "en", "02-again.md") + ":3: lesson id t is also used by " + filepath.Join(dir, "en", "01-t.md") + ":3",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("lab check lacks %q:\n%s", w, all)
		}
	}
	if strings.Contains(all, "notes.md") || len(r.Skipped) != 1 || !strings.HasSuffix(r.Skipped[0], "notes.md") {
		t.Errorf("notes.md: problems %q, skipped %v; want it skipped as not a lesson", all, r.Skipped)
	}
	if r.Lessons != 1 {
		t.Errorf("%d lessons load cleanly, want 1 (the English one)", r.Lessons)
	}
}

// TestTheShippedLessonsPassLabCheck: `lab check labs/` finds nothing.
func TestTheShippedLessonsPassLabCheck(t *testing.T) {
	for _, r := range []labs.Report{labs.Check(), labs.Check(".")} {
		if len(r.Problems) > 0 || r.Lessons != 66 {
			t.Errorf("%d lessons, problems: %v", r.Lessons, r.Problems)
		}
	}
}

// A translation's step that differs says what differs: the kind, an
// attribute (missing, added, changed) or a body line.
func TestATranslatedStepThatDiffersSaysWhat(t *testing.T) {
	en := &lab.Step{Kind: "sql", Attrs: map[string]string{"session": "B", "label": "x"}, Body: "SELECT 1;\nSELECT 2;"}
	for _, c := range []struct {
		tr   *lab.Step
		want string
	}{
		{&lab.Step{Kind: "sql", Attrs: map[string]string{"session": "B", "label": "翻译"}, Body: "SELECT 1;\nSELECT 2;"}, ""},
		{&lab.Step{Kind: "expect", Attrs: map[string]string{"session": "B"}, Body: "SELECT 1;\nSELECT 2;"}, "the kind is expect, the English sql"},
		{&lab.Step{Kind: "sql", Attrs: map[string]string{}, Body: "SELECT 1;\nSELECT 2;"}, `session="B" is missing`},
		{&lab.Step{Kind: "sql", Attrs: map[string]string{"session": "B", "blocks": ""}, Body: "SELECT 1;\nSELECT 2;"}, `blocks="" is not in the English step`},
		{&lab.Step{Kind: "sql", Attrs: map[string]string{"session": "A"}, Body: "SELECT 1;\nSELECT 2;"}, `session="A", the English session="B"`},
		{&lab.Step{Kind: "sql", Attrs: map[string]string{"session": "B"}, Body: "SELECT 1;\nSELECT 3;"}, `body line 2 is "SELECT 3;", the English "SELECT 2;"`},
	} {
		if got := labs.StepDiff(en, c.tr); got != c.want {
			t.Errorf("%+v: %q, want %q", c.tr, got, c.want)
		}
	}
}

// A check that reads nothing from a server holds whatever the servers
// answer, and every mutant of its expected value is killed: lab check
// reports it (file:line and the fix), and the lesson still loads. A check
// that reads a table, a variable or a function of the server is not one.
func TestLabCheckReportsACheckThatCannotFail(t *testing.T) {
	dir := t.TempDir()
	constant := head + "```sql\nSELECT 1 AS one, 'x';\n```\n\n```expect\nvalue 1\n```\n" +
		"\n```ledger variant=unsafe expect=\"applied once\"\nintended: 1\napplied: 1\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: SELECT 1+0\n```\n"
	reads := strings.Replace(head, "id: t\nnumber: 1", "id: u\nnumber: 2", 1) + "```sql\nSELECT COUNT(*) FROM points_account;\n```\n\n```expect\nvalue 0\n```\n\n```sql\nSELECT @@transaction_isolation;\n```\n\n```expect\nrows 1\n```\n\n```sql\nSELECT NOW() > 0;\n```\n\n```expect\nvalue 1\n```\n" +
		"\n```ledger variant=unsafe expect=\"applied once\"\nintended: 1\napplied: SELECT COUNT(*) FROM points_account\n```\n\n```ledger variant=safe expect=\"applied once\"\nintended: 1\napplied: SELECT COUNT(*) FROM points_account\n```\n"
	os.WriteFile(filepath.Join(dir, "01-t.md"), []byte(constant), 0o644)
	os.WriteFile(filepath.Join(dir, "02-u.md"), []byte(reads), 0o644)
	r := labs.Check(dir)
	got := fmt.Sprint(r.Problems)
	for _, want := range []string{
		"01-t.md:17: expect checks the sql step at line 13, which reads nothing from a server",
		"01-t.md:21: ledger unsafe reads nothing from a server",
		"01-t.md:26: ledger safe reads nothing from a server",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lab check lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "02-u.md") {
		t.Errorf("a check that reads the server was reported:\n%s", got)
	}
	if r.Lessons != 2 {
		t.Errorf("%d lessons loaded, want both (the report is the author's, not a load error)", r.Lessons)
	}
}

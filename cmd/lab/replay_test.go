package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/labtest"
)

// laneDatabases lists the databases of ns's replay lanes (NS_rK).
func laneDatabases(t *testing.T, env *labtest.Env) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := env.Svc.MySQL.QueryContext(ctx, "SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(n, "_"+env.NS+"_r") {
			out = append(out, n)
		}
	}
	return out
}

// A replay side by side leaves no lane behind: each lane's databases go
// when its lesson ends, and the per-step durations are in the JSON.
func TestReplayInLanesRemovesEachLaneAndReportsEveryStepsDuration(t *testing.T) {
	env := labtest.Connect(t)
	out, errOut, code := runLab(t, "replay", "idem-first-processing", "idem-business-key", "--parallel", "2", "--json", "--namespace", env.NS, "--no-docker")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if left := laneDatabases(t, env); len(left) > 0 {
		t.Fatalf("lanes left after the replay: %v\n%s", left, errOut)
	}
	var rep struct {
		Lessons []struct {
			DurationMS int64 `json:"duration_ms"`
			Steps      []struct {
				Kind       string `json:"kind"`
				DurationMS *int64 `json:"duration_ms"`
			} `json:"steps"`
		} `json:"lessons"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Lessons) != 2 {
		t.Fatalf("%d lessons reported", len(rep.Lessons))
	}
	for _, l := range rep.Lessons {
		var sum int64
		for _, s := range l.Steps {
			if s.DurationMS == nil {
				t.Fatalf("a %s step has no duration_ms", s.Kind)
			}
			sum += *s.DurationMS
		}
		if sum > l.DurationMS {
			t.Errorf("steps took %d ms in all, more than their lesson's %d ms", sum, l.DurationMS)
		}
	}
}

// The check above can fail: a lane left as a crashed replay would leave it
// is seen.
func TestLaneDatabasesSeesALaneThatStays(t *testing.T) {
	env := labtest.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db := "blog_idempotency_lab_" + env.NS + "_r1"
	if _, err := env.Svc.MySQL.ExecContext(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	defer env.Svc.MySQL.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+db)
	if left := laneDatabases(t, env); len(left) != 1 {
		t.Fatalf("a lane database that stays was not seen: %v", left)
	}
}

// A lesson that cannot check all it claims here (its needs are not offered)
// is SKIPPED, not PASS and not FAIL: in the progress line, the JSON, the
// JUnit file and the summary. --strict (the default when $CI is set) turns
// that into exit 1; without it the run exits 0.
func TestASkippedLessonIsNeverAPassAndFailsUnderStrict(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "needs.md")
	os.WriteFile(p, []byte("# Needs\n\n```lesson\nid: needs-control\nnumber: 1\npart: idempotency\nneeds: broker-control\ntable: blog_idempotency_lab points_account\n```\n\n```reset db=blog_idempotency_lab\n```\n"+bothLedgers), 0o644)
	env := labtest.Connect(t)
	junit := filepath.Join(dir, "j.xml")
	run := func(ci string, args ...string) (string, string, int) {
		cmd := exec.Command(labBin(t), append([]string{"replay", p, "--namespace", env.NS}, args...)...)
		cmd.Env = append(os.Environ(), "LAB_BROKER_CONTROL=", "CI="+ci)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	out, errOut, code := run("", "--json", "--junit", junit)
	if code != 0 {
		t.Fatalf("without --strict: exit %d, want 0\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "SKIP  1 needs-control") || !strings.Contains(errOut, "needs broker-control") || !strings.Contains(errOut, "1 skipped") {
		t.Errorf("the progress and summary do not say skipped and why:\n%s", errOut)
	}
	if !strings.Contains(out, `"skipped": true`) || !strings.Contains(out, `"skipped": 1`) || !strings.Contains(out, `"passed": 0`) {
		t.Errorf("json:\n%s", out)
	}
	if x, _ := os.ReadFile(junit); !strings.Contains(string(x), "<skipped") || strings.Contains(string(x), "<failure") {
		t.Errorf("junit:\n%s", x)
	}
	if _, errOut, code := run("", "--strict"); code != 1 || !strings.Contains(errOut, "--strict") {
		t.Errorf("--strict: exit %d, want 1\n%s", code, errOut)
	}
	if _, errOut, code := run("true"); code != 1 {
		t.Errorf("with $CI set: exit %d, want 1 (strict by default)\n%s", code, errOut)
	}
}

// --repeat replays the lessons N times over and counts each lesson's
// failures of N, naming the first failure's file, line and why; a failure
// in any round is exit 1.
func TestReplayRepeatCountsEachLessonsFailuresOfN(t *testing.T) {
	env := labtest.Connect(t)
	_, errOut, code := runLab(t, "replay", "idem-first-processing", filepath.Join("testdata", "always-fails.md"),
		"--repeat", "2", "--parallel", "2", "--namespace", env.NS, "--no-docker")
	if code != 1 {
		t.Fatalf("exit %d with a lesson that fails every round\n%s", code, errOut)
	}
	for _, want := range []string{
		"round 1 of 2", "round 2 of 2",
		"idem-first-processing              0/2",
		"always-fails                       2/2",
		"round 1: testdata/always-fails.md:17 expect: contains 12345",
		"2 failures of 4 lesson runs",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("lab replay --repeat 2 does not say %q:\n%s", want, errOut)
		}
	}
	if left := laneDatabases(t, env); len(left) > 0 {
		t.Errorf("lanes left after the rounds: %v", left)
	}
}

// --repeat with a report flag is refused, saying why: the reports are one
// replay's.
func TestReplayRepeatRefusesReportsAndMutants(t *testing.T) {
	_, errOut, code := runLab(t, "replay", "--all", "--repeat", "3", "--json")
	if code != 2 || !strings.Contains(errOut, "--repeat N wants") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// lab replay --mutate --kind answer-replaced judges every check of a lesson
// from one replay per path, names each mutant's kind, and exits 0 with none
// surviving; a fixture with a contains that finds a column's name exits 1
// naming it.
func TestReplayJudgesEveryAnswerReplacedMutantAndNamesASurvivor(t *testing.T) {
	env := labtest.Of(t)
	_, errOut, code := runLab(t, "replay", "idem-first-processing", "--mutate", "100000", "--kind", "answer-replaced",
		"--seed", "1", "--namespace", env.NS, "--no-docker")
	if code != 0 || !strings.Contains(errOut, "KILLED   answer-replaced idem-first-processing:") || !strings.Contains(errOut, " 0 survived, 0 broken") {
		t.Fatalf("exit %d, want 0 with every answer-replaced mutant killed:\n%s", code, errOut)
	}
	_, errOut, code = runLab(t, "replay", filepath.Join("..", "..", "internal", "mutation", "testdata", "answers.md"), "--mutate", "100000",
		"--kind", "answer-replaced", "--seed", "1", "--namespace", env.NS, "--no-docker")
	if code != 1 || !strings.Contains(errOut, "SURVIVED answer-replaced answers:") || !strings.Contains(errOut, "contains points still held") {
		t.Fatalf("exit %d, want 1 naming the contains that reads a column's name:\n%s", code, errOut)
	}
}

package main

import (
	"context"
	"encoding/json"
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
		rows.Scan(&n)
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

package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/room"
)

// The instructor's exports are the record: alice fails twice (the first
// failure the root cause), answers a poll; lab room --goto sends the room
// elsewhere and --reset starts her afresh. Afterwards --json, --csv and
// --events still hold both failures, the first failed step with its error,
// her answer, the goto and the reset, oldest first; the room's table names
// the first failed step of her attempt, not the last.
func TestTheDebriefsExportsKeepTheHistoryAGotoAndAResetFollow(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rm, err := room.Open(ctx, env.Svc.MySQL, env.Svc.Config.MySQL, env.NS, "debrief-test")
	if err != nil {
		t.Fatal(err)
	}
	defer rm.Close()
	const l = "broker-three-links"
	for _, snap := range []string{
		`{"lessons":{"` + l + `":{"step":3}},"activity":{"lesson":"` + l + `","step":3,"steps":20,"failed":1,"fail_step":"[3/20] expect","fail_why":"want 1 row, got 0"}}`,
		`{"lessons":{"` + l + `":{"step":5,"predictions":{"confirm-means-processed":"yes"}}},"activity":{"lesson":"` + l + `","step":5,"steps":20,"failed":2,"fail_step":"[5/20] expect","fail_why":"want 2, got 1"}}`,
	} {
		if err := rm.Store("alice").Save(ctx, []byte(snap)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rm.Store("bob").Save(ctx, []byte(`{"activity":{"lesson":"`+l+`","step":1,"steps":20}}`)); err != nil {
		t.Fatal(err)
	}
	out, _, _ := runLab(t, "room", "--room", env.NS)
	if !strings.Contains(out, "[3/20] expect: want 1 row, got 0") || strings.Contains(out, "[5/20]") {
		t.Errorf("the room's table does not name alice's first failed step and its error:\n%s", out)
	}
	if o, e, code := runLab(t, "room", "--room", env.NS, "--goto", "1"); code != 0 {
		t.Fatalf("--goto 1: exit %d\n%s%s", code, o, e)
	}
	if o, e, code := runLab(t, "room", "--room", env.NS, "--reset", "alice"); code != 0 {
		t.Fatalf("--reset alice: exit %d\n%s%s", code, o, e)
	}

	o, e, code := runLab(t, "room", "--room", env.NS, "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d\n%s", code, e)
	}
	var doc struct {
		Polls []struct {
			Answered int            `json:"answered"`
			Answers  map[string]int `json:"answers"`
		} `json:"polls"`
		Events []struct {
			Kind   string `json:"kind"`
			Name   string `json:"name"`
			Step   string `json:"step"`
			Detail string `json:"detail"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(o), &doc); err != nil {
		t.Fatalf("--json: %v\n%s", err, o)
	}
	var kinds []string
	firstWhy := ""
	for _, ev := range doc.Events {
		kinds = append(kinds, ev.Kind)
		if ev.Kind == "fail" && firstWhy == "" {
			firstWhy = ev.Step + ": " + ev.Detail
		}
	}
	if got := strings.Join(kinds, " "); got != "fail fail predict goto reset" {
		t.Errorf("--json's record: %s, want fail fail predict goto reset\n%s", got, o)
	}
	if firstWhy != "[3/20] expect: want 1 row, got 0" {
		t.Errorf("--json's first failure: %q, want [3/20] expect: want 1 row, got 0", firstWhy)
	}
	if len(doc.Polls) != 1 || doc.Polls[0].Answered != 1 || doc.Polls[0].Answers["yes"] != 1 {
		t.Errorf("--json's poll after alice's reset: %+v, want her answer kept", doc.Polls)
	}

	o, e, code = runLab(t, "room", "--room", env.NS, "--events", "--csv")
	if code != 0 {
		t.Fatalf("--events --csv: exit %d\n%s", code, e)
	}
	rows, err := csv.NewReader(strings.NewReader(o)).ReadAll()
	if err != nil || len(rows) != 6 {
		t.Fatalf("--events --csv: %d rows (%v), want a header and 5 events:\n%s", len(rows), err, o)
	}
	kind := slices.Index(rows[0], "kind")
	if kind < 0 {
		t.Fatalf("--events --csv has no kind column: %v", rows[0])
	}
	var csvKinds []string
	for _, r := range rows[1:] {
		csvKinds = append(csvKinds, r[kind])
	}
	if got := strings.Join(csvKinds, " "); got != "fail fail predict goto reset" {
		t.Errorf("--events --csv: %s, want fail fail predict goto reset", got)
	}

	o, _, _ = runLab(t, "room", "--room", env.NS, "--events")
	for _, want := range []string{"want 1 row, got 0", "want 2, got 1", "goto", "reset"} {
		if !strings.Contains(o, want) {
			t.Errorf("--events does not say %q:\n%s", want, o)
		}
	}
}

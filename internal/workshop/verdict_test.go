package workshop_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A participant gives the room their challenge verdict through the SSH
// door, as the name they logged in with: no credential of the room. A
// verdict that is not one is refused with why, and nothing else is served.
func TestAChallengeVerdictComesThroughTheSSHDoorUnderTheSessionsName(t *testing.T) {
	t.Parallel()
	addr, rm := serveRoom(t, roomName(t), "server-a")
	al := who(t, "al")
	send := func(body string) (string, error) {
		c, err := dial(addr, al, password)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := c.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		s.Stdin = strings.NewReader(body)
		out, err := s.CombinedOutput("challenge-result")
		return string(out), err
	}
	out, err := send(`{"challenge":"once","seed":2,"passed":true,"line":"seed 2: applied once 200 of 200, lost 0, twice 0\u001b[2J"}`)
	if err != nil || !strings.Contains(out, "kept in room") {
		t.Fatalf("a verdict through the door: %v\n%s", err, out)
	}
	ps, err := rm.Participants(context.Background())
	if err != nil || len(ps) != 1 || ps[0].Name != al || ps[0].Challenges["once"] == nil || !ps[0].Challenges["once"].Passed ||
		strings.Contains(ps[0].Challenges["once"].Last, "\x1b") {
		t.Fatalf("the room keeps %+v (%v)", ps, err)
	}
	for _, bad := range []string{`{"challenge":"once","seed":1,"passed":true,"as":"bob"}`, `{"challenge":"everything","seed":1}`, "not json", strings.Repeat("x", 5000)} {
		if out, err := send(bad); err == nil || !strings.Contains(out, "lab: ") {
			t.Errorf("%.40q was taken: %v\n%s", bad, err, out)
		}
	}
	if entries, _ := rm.Log(context.Background(), 50, ""); !strings.Contains(fmt.Sprint(entries), al+" from 127.0.0.1 sent a challenge verdict from their own machine: once passed under seed 2") {
		t.Errorf("the room's log does not say who sent it: %v", entries)
	}
}

package workshop_test

import (
	"context"
	"strings"
	"testing"
)

// A verdict the participant's machine sends is refused, however well
// formed, and the room keeps nothing of it: the room's verdicts are only
// those its server grades (challenge-run).
func TestAForgedVerdictIsRefusedAndTheRoomKeepsNothing(t *testing.T) {
	t.Parallel()
	addr, rm := serveRoom(t, roomName(t), "server-a")
	al := who(t, "al")
	c, err := dial(addr, al, password)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	s.Stdin = strings.NewReader(`{"challenge":"once","seed":1,"passed":true}`)
	out, err := s.CombinedOutput("challenge-result")
	if err == nil || !strings.Contains(string(out), "keeps only the verdicts its server grades") {
		t.Fatalf("a forged verdict: %v\n%s", err, out)
	}
	ps, err := rm.Participants(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if len(p.Challenges) > 0 {
			t.Fatalf("the room keeps a challenge verdict nobody's run graded: %+v", p)
		}
	}
}

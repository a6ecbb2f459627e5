package workshop

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// One run at a time per participant, at most max on the server, and the
// door forwards only to what that participant's own run asked for, while
// it runs.
func TestTheDoorForwardsOnlyToTheAddressesOfTheParticipantsOwnRun(t *testing.T) {
	g := grading{max: 1}
	a := &agent{allowed: map[string]bool{"127.0.0.1:5000": true}}
	if err := g.begin("al", a); err != nil {
		t.Fatal(err)
	}
	if err := g.begin("al", a); err == nil || !strings.Contains(err.Error(), "one at a time") {
		t.Errorf("a second run of al's: %v", err)
	}
	if err := g.begin("bo", &agent{allowed: map[string]bool{}}); err == nil || !strings.Contains(err.Error(), "all are taken") {
		t.Errorf("a run past the server's limit: %v", err)
	}
	for _, c := range []struct {
		user, dest string
		want       bool
	}{
		{"al", "127.0.0.1:5000", true},
		{"al", "127.0.0.1:3306", false},
		{"bo", "127.0.0.1:5000", false},
		{"al", "localhost:5000", false},
	} {
		if got := g.allows(c.user, c.dest); got != c.want {
			t.Errorf("%s → %s: allowed %v, want %v", c.user, c.dest, got, c.want)
		}
	}
	g.end("al")
	if g.allows("al", "127.0.0.1:5000") {
		t.Errorf("a forward allowed after the run ended")
	}
}

// peer plays the participant's agent: it answers each forward with
// answer(target).
func peer(t *testing.T, answer func(string) string) *agent {
	t.Helper()
	toAgent, fromServer := io.Pipe()
	toServer, fromAgent := io.Pipe()
	a := newAgent(toServer, fromServer)
	go func() {
		sc := bufio.NewScanner(toAgent)
		enc := json.NewEncoder(fromAgent)
		for sc.Scan() {
			var m wire
			json.Unmarshal(sc.Bytes(), &m)
			if m.Op == opForward {
				enc.Encode(wire{Op: opForwarded, Target: m.Target, Local: answer(m.Target)})
			}
		}
	}()
	t.Cleanup(func() { fromAgent.Close(); toAgent.Close() })
	return a
}

// A copy's environment names the run's addresses as the agent forwards
// them: the DSN, its host and port, the broker URL; and only an address
// is taken back as where the agent listens.
func TestACopysEnvironmentNamesTheAgentsForwards(t *testing.T) {
	a := peer(t, func(target string) string {
		return map[string]string{"127.0.0.1:3310": "127.0.0.1:41000", "127.0.0.1:5680": "127.0.0.1:42000"}[target]
	})
	env, err := a.localEnv([]string{
		"LAB_MYSQL_DSN=rmlab_x_c1:pw@tcp(127.0.0.1:3310)/blog_idempotency_lab_x",
		"LAB_MYSQL_HOST=127.0.0.1", "LAB_MYSQL_PORT=3310",
		"LAB_AMQP_URL=amqp://u:p@127.0.0.1:5680/", "LAB_QUEUE=orders_x",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(env, " ")
	for _, want := range []string{"tcp(127.0.0.1:41000)", "LAB_MYSQL_PORT=41000", "amqp://u:p@127.0.0.1:42000/", "LAB_QUEUE=orders_x"} {
		if !strings.Contains(got, want) {
			t.Errorf("the environment lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, "3310") || strings.Contains(got, "5680") {
		t.Errorf("the environment still names the server's own addresses: %s", got)
	}
	if !a.allows("127.0.0.1:3310") || a.allows("127.0.0.1:41000") {
		t.Errorf("the door's rule is not the run's targets: %v", a.allowed)
	}

	bad := peer(t, func(string) string { return "127.0.0.1:1; touch /tmp/x" })
	if _, err := bad.localEnv([]string{"LAB_MYSQL_DSN=u:p@tcp(127.0.0.1:3310)/db"}); err == nil || !strings.Contains(err.Error(), "not an address") {
		t.Errorf("an agent's answer that is no address was taken: %v", err)
	}
}

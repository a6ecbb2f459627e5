package node_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	. "github.com/rmlab/lab/internal/node"
)

func TestClusterReadsThreeURLsAndNeverPrintsTheirPassword(t *testing.T) {
	t.Setenv(ClusterEnv, "")
	if urls, _, err := Cluster(); urls != nil || err != nil {
		t.Fatalf("without %s: %v, %v; want none", ClusterEnv, urls, err)
	}
	t.Setenv(ClusterEnv, "amqp://lab:s3cret-pw@127.0.0.1:5701/,amqp://lab:s3cret-pw@127.0.0.1:5702/")
	if _, _, err := Cluster(); err == nil || !strings.Contains(err.Error(), "2 URLs") || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("two URLs: %v; want a refusal naming the count and no password", err)
	}
	t.Setenv(ClusterEnv, "amqp://lab:s3cret-pw@127.0.0.1/,b,c")
	if _, _, err := Cluster(); err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("a URL without a port: %v; want a refusal without the password", err)
	}
	t.Setenv(ClusterEnv, "amqp://lab:pw@127.0.0.1:5701/, amqp://lab:pw@127.0.0.1:5702/,amqp://lab:pw@127.0.0.1:5703/")
	t.Setenv(ClusterControlEnv, "")
	urls, control, err := Cluster()
	if err != nil || len(urls) != 3 || !reflect.DeepEqual(control, []string{"docker", "compose", "--profile", "cluster"}) {
		t.Fatalf("three URLs: %v %v %v", urls, control, err)
	}
}

// An operator stands in for docker compose: the control script hands each
// request to it, and it kills, stops or starts the lab-owned nodes of
// another set, which play the compose file's rabbit1..3.
func TestAnAttachedClusterIsKilledAndStartedAgainThroughItsControlCommand(t *testing.T) {
	owner, _ := start(t, 3)
	dir := t.TempDir()
	script := filepath.Join(dir, "control")
	body := "#!/bin/sh\nd=" + dir + "\necho \"$1 $2\" > \"$d/req.tmp\" && mv \"$d/req.tmp\" \"$d/req\"\n" +
		"while [ ! -e \"$d/ack\" ]; do sleep 0.05; done\nrm \"$d/ack\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	var seen []string
	stop := make(chan struct{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			b, err := os.ReadFile(filepath.Join(dir, "req"))
			if err != nil {
				continue
			}
			os.Remove(filepath.Join(dir, "req"))
			req := strings.Fields(string(b))
			seen = append(seen, strings.Join(req, " "))
			k, _ := strconv.Atoi(strings.TrimPrefix(req[1], "rabbit"))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			switch req[0] {
			case "kill":
				owner.Kill(k)
			case "stop":
				owner.Stop(ctx, k)
			case "start":
				owner.Restart(ctx, k)
			}
			cancel()
			os.WriteFile(filepath.Join(dir, "ack"), nil, 0o600)
		}
	}()
	defer func() { close(stop); <-served }()

	var urls []string
	for _, n := range owner.Nodes() {
		urls = append(urls, n.URL())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := Attach(ctx, urls, []string{script})
	if err != nil {
		t.Fatal(err)
	}
	ch := channel(t, s.Nodes()[0])
	if _, err := ch.QueueDeclare("attached.q", true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(2); err != nil {
		t.Fatal(err)
	}
	if st := s.StateOf(s.Nodes()[1]); st != Killed {
		t.Fatalf("node 2 is %s after Kill, want killed", st)
	}
	if owner.StateOf(owner.Nodes()[1]) != Killed {
		t.Fatal("the control command did not kill rabbit2")
	}
	if !publish(t, ch, "attached.q", amqp.Persistent) {
		t.Fatal("with one of three nodes down the quorum queue did not confirm")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := owner.Nodes()[1]; owner.StateOf(n) != Running {
		t.Fatal("Close did not start rabbit2 again")
	}
	if got, err := ready(t, owner.Nodes()[1], "attached.q"); err != nil || got != 1 {
		t.Fatalf("through the restarted node 2: %d messages, %v; want 1", got, err)
	}
	if want := []string{"kill rabbit2", "start rabbit2"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("the control command was run as %q, want %q", seen, want)
	}
	if got := s.Command("kill", s.Nodes()[0]); got != script+" kill rabbit1" {
		t.Errorf("the command a lesson shows is %q", got)
	}
}

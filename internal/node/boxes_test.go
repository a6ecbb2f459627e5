package node_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/containers"
	"github.com/rmlab/lab/internal/labtest"
	. "github.com/rmlab/lab/internal/node"
)

// On a machine with Docker and no RabbitMQ, the lab's nodes are containers:
// three form a cluster, a killed node's classic queue is unavailable while
// its quorum queue goes on, the node comes back on its own data at the same
// address, and Close leaves no container and no network behind.
func TestNodesInContainersFormAClusterSurviveAKillAndLeaveNothing(t *testing.T) {
	e := labtest.Docker(t)
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Namespace: "tbox", Nodes: 3, Containers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t.Logf("RabbitMQ %s: three containers up in %s (%s)", s.Version, time.Since(t0).Round(time.Millisecond), s.Dir)
	n1, n2 := s.Nodes()[0], s.Nodes()[1]
	// The AMQP port is published on the machine: guest/guest, everyone's
	// password, is refused there; the set's own works (channel below).
	if c, err := amqp.Dial(fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", n1.Port)); err == nil {
		c.Close()
		t.Fatal("a node in a container took guest/guest")
	} else if !strings.Contains(err.Error(), "403") {
		t.Fatalf("guest/guest on node 1: %v; want 403 (access refused)", err)
	}
	if got := s.Command("kill", n1); got != "docker kill "+n1.Name || !strings.HasPrefix(n1.Name, "rmlab-tbox-rabbit1-") {
		t.Fatalf("node 1 %q, its kill shown as %q", n1.Name, got)
	}
	ch := channel(t, n1)
	if _, err := ch.QueueDeclare("cq", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("qq", true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"cq", "qq"} {
		if !publish(t, ch, q, amqp.Persistent) {
			t.Fatalf("publish to %s not confirmed", q)
		}
	}
	// The queues are the cluster's: node 2 knows them.
	if got, err := ready(t, n2, "qq"); err != nil || got != 1 {
		t.Fatalf("the quorum queue read on node 2: ready %d, %v; the nodes did not form a cluster", got, err)
	}
	if err := s.Kill(1); err != nil {
		t.Fatal(err)
	}
	rd := &broker.Reader{Client: broker.NewClient(n2.URL())}
	defer rd.Close()
	ctx0, cancel0 := context.WithTimeout(context.Background(), 30*time.Second)
	qs, err := rd.Stat(ctx0, "cq")
	cancel0()
	if err != nil || qs.Down == "" {
		t.Fatalf("classic queue with its node killed, read on node 2: %+v, %v; want unavailable", qs, err)
	}
	var got int
	for range 100 {
		if got, err = ready(t, n2, "qq"); err == nil && got == 1 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || got != 1 {
		t.Fatalf("quorum queue on node 2 with node 1 killed: ready %d, %v; want 1", got, err)
	}
	if err := s.Restart(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if got, err = ready(t, n1, "cq"); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || got != 1 {
		t.Fatalf("classic queue on node 1 after its restart at %s: ready %d, %v; want 1", n1.Addr(), got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := ours(t, e, n1.Name[:len(n1.Name)-len("-xxxxxx")-len("rabbit1")]); len(left) > 0 {
		t.Fatalf("left after Close: %v", left)
	}
}

// ours lists the containers and networks of e whose name begins with prefix
// or that a set of this process made.
func ours(t *testing.T, e containers.Engine, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := e.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cs {
		if strings.HasPrefix(c.Name(), prefix) {
			out = append(out, "container "+c.Name())
		}
	}
	ns, err := e.Networks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	me := containers.Owner("")[containers.LabelPID]
	for _, n := range ns {
		if n.Labels[containers.LabelPID] == me {
			out = append(out, "network "+n.Name)
		}
	}
	return out
}

package node_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
	. "github.com/rmlab/lab/internal/node"
	"github.com/rmlab/lab/internal/services"
)

// With NODE_TEST_CHILD set, the test binary is a lab that starts one node,
// says so, and waits to be killed.
func TestMain(m *testing.M) {
	if base := os.Getenv("NODE_TEST_CHILD"); base != "" {
		s, err := Start(context.Background(), Options{Namespace: "sigkill", Nodes: 1, Dir: base})
		if err != nil {
			println("start:", err.Error())
			os.Exit(1)
		}
		println("up", s.Nodes()[0].Name)
		select {}
	}
	labtest.Main(m)
}

func start(t *testing.T, nodes int) (*Set, string) {
	t.Helper()
	labtest.NodeServer(t)
	base := baseDir(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{Namespace: "t", Nodes: nodes, Dir: base})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, base
}

// baseDir is a fresh folder for a test's sets: under LAB_NODES_DIR when
// that is set (a server script in a chroot sees only what is inside it).
func baseDir(t *testing.T) string { return labtest.NodesDir(t) }

func channel(t *testing.T, n *Node) *amqp.Channel {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := services.DialAMQP(ctx, n.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	return ch
}

func publish(t *testing.T, ch *amqp.Channel, queue string, mode uint8) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, false, false, amqp.Publishing{DeliveryMode: mode, Body: []byte("m")})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := dc.WaitContext(ctx)
	return err == nil && ok
}

func ready(t *testing.T, n *Node, queue string) (int, error) {
	t.Helper()
	cl := broker.NewClient(n.URL())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := -1
	err := cl.Probe(ctx, func(ch *amqp.Channel) error {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err == nil {
			got = q.Messages
		}
		return err
	})
	return got, err
}

func TestARestartedNodeKeepsThePersistentMessageAndLosesTheConfirmedTransientOne(t *testing.T) {
	s, base := start(t, 1)
	n := s.Nodes()[0]
	if s.Version == "" || !strings.HasPrefix(n.Name, "rmlab-t-1@") {
		t.Fatalf("version %q, node %q", s.Version, n.Name)
	}
	ch := channel(t, n)
	if _, err := ch.QueueDeclare("q", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if !publish(t, ch, "q", amqp.Persistent) || !publish(t, ch, "q", amqp.Transient) {
		t.Fatal("a publish was not confirmed")
	}
	if got, err := ready(t, n, "q"); err != nil || got != 2 {
		t.Fatalf("before the restart: ready %d, %v; want 2", got, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Stop(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if s.StateOf(n) != Stopped {
		t.Fatalf("state %s after Stop", s.StateOf(n))
	}
	if err := s.Restart(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got, err := ready(t, n, "q"); err != nil || got != 1 {
		t.Fatalf("after the restart: ready %d, %v; want 1 (the persistent message)", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if left := Leftovers(base); len(left) > 0 {
		t.Fatalf("processes left after Close: %v", left)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Fatalf("the set's folder %s is still there after Close (%v)", s.Dir, err)
	}
}

func TestASecondLabInTheSameNamespaceIsRefusedTheNodes(t *testing.T) {
	s, base := start(t, 1)
	_, err := Start(context.Background(), Options{Namespace: "t", Nodes: 1, Dir: base})
	if err == nil || !strings.Contains(err.Error(), "another lab in this namespace") {
		t.Fatalf("second Start: %v", err)
	}
	if s.StateOf(s.Nodes()[0]) != Running {
		t.Fatal("the refused Start disturbed the first lab's node")
	}
}

func TestInAClusterAQuorumQueueKeepsServingWhenAClassicQueuesNodeIsKilled(t *testing.T) {
	t0 := time.Now()
	s, _ := start(t, 3)
	t.Logf("RabbitMQ %s: three nodes up in %s", s.Version, time.Since(t0).Round(time.Millisecond))
	n1, n2 := s.Nodes()[0], s.Nodes()[1]
	ch := channel(t, n1)
	if _, err := ch.QueueDeclare("cq", true, false, false, false, nil); err != nil { // its home: node 1
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
	if err := s.Kill(1); err != nil {
		t.Fatal(err)
	}
	t.Logf("node 1 killed at %s", time.Since(t0).Round(time.Millisecond))
	// 3.x answers 404 "home node … is down or inaccessible" at once; 4.x
	// holds the answer for about a minute: either way the lab reads it as
	// unavailable.
	rd := &broker.Reader{Client: broker.NewClient(n2.URL())}
	defer rd.Close()
	ctx0, cancel0 := context.WithTimeout(context.Background(), 30*time.Second)
	qs, err := rd.Stat(ctx0, "cq")
	cancel0()
	if err != nil || qs.Down == "" {
		t.Fatalf("classic queue with its node killed, read on node 2: %+v, %v; want unavailable", qs, err)
	}
	t.Logf("classic queue unavailable on node 2 (%s) at %s", qs.Down, time.Since(t0).Round(time.Millisecond))
	var got int
	for range 50 { // the quorum queue elects a new leader within seconds
		if got, err = ready(t, n2, "qq"); err == nil && got == 1 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || got != 1 {
		t.Fatalf("quorum queue on node 2 with node 1 killed: ready %d, %v; want 1", got, err)
	}
	t.Logf("quorum queue served by node 2 at %s", time.Since(t0).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Restart(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if got, err = ready(t, n2, "cq"); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil || got != 1 {
		t.Fatalf("classic queue after its node came back: ready %d, %v; want 1", got, err)
	}
}

func TestNoNodeOutlivesALabKilledBySIGKILL(t *testing.T) {
	labtest.NodeServer(t)
	base := baseDir(t)
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "NODE_TEST_CHILD="+base)
	errs, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(errs)
	up := false
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "up ") {
			up = true
			break
		}
		t.Log(sc.Text())
	}
	if !up {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child lab did not start its node")
	}
	if len(Leftovers(base)) < 2 {
		t.Fatalf("before the kill, marked processes %v; want the node and its epmd", Leftovers(base))
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(Leftovers(base)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := Leftovers(base); len(left) > 0 {
		t.Fatalf("processes left 10 s after the lab was killed: %v", left)
	}
	removed, err := Sweep(base)
	if err != nil || len(removed) != 1 || removed[0] != filepath.Join(base, "sigkill") {
		t.Fatalf("Sweep: %v, %v; want the dead lab's folder", removed, err)
	}
}

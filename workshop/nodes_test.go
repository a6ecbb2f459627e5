package workshop_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/workshop"
)

// nodesBase points the lab's node sets at a fresh folder for the test
// (under LAB_NODES_DIR when that is set: a server script in a chroot sees
// only what is inside it).
func nodesBase(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	if d := os.Getenv("LAB_NODES_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		var err error
		if base, err = os.MkdirTemp(d, "ws"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(base) })
	}
	t.Setenv("LAB_NODES_DIR", base)
	return base
}

// nodeProcs lists the live processes of the node set in folder dir (each
// carries the set's marker, LAB_NODE_SET=dir).
func nodeProcs(dir string) []string { return procsWith("LAB_NODE_SET="+dir, "") }

// TestAParticipantsLessonStartsANodeOfTheirOwnAndItStopsWhenTheirConnectionDrops:
// on a server whose participants may own nodes (lab serve --own-broker), a
// participant's nodes step starts a real RabbitMQ node in their namespace's
// folder, the lesson's publish is confirmed by it, and when the connection
// drops with no goodbye the node's processes and folder go.
func TestAParticipantsLessonStartsANodeOfTheirOwnAndItStopsWhenTheirConnectionDrops(t *testing.T) {
	base := nodesBase(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	svc := connectServices(t)
	if !svc.Info.OwnBroker {
		t.Fatalf("this machine should let the lab own nodes: %s", svc.Info.OwnBrokerNote)
	}
	addr, srv := start(t, workshop.Config{Seats: 2, Services: svc, LessonsDir: "testdata/node-lessons", OwnBroker: true})
	tm := connect(t, addr, "wsnode")
	tm.until(t, "the screen", hasScreen)
	set := filepath.Join(base, "wsnode")
	tm.in.Write([]byte("\r")) // nodes start=1
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(tm.text(), "enter: run step 2/6") || len(nodeProcs(set)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no node of wsnode's own started in %s (processes %v); the terminal shows:\n%s", set, nodeProcs(set), tail(tm.text()))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The message is on the participant's node, and not on the shared broker.
	m := regexp.MustCompile(`rmlab-wsnode-1@localhost \| 127\.0\.0\.1:(\d+)`).FindStringSubmatch(tm.text())
	if m == nil {
		t.Fatalf("the nodes step shows no address for wsnode's node:\n%s", tail(tm.text()))
	}
	for range 2 { // declare, publish: against the participant's node
		tm.in.Write([]byte("\r"))
		time.Sleep(1500 * time.Millisecond)
	}
	deadline = time.Now().Add(15 * time.Second)
	for readyAt(t, "amqp://guest:guest@127.0.0.1:"+m[1]+"/", "orders_wsnode") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("wsnode's node never held the lesson's message in orders_wsnode; the terminal shows:\n%s", tail(tm.text()))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := readyAt(t, svc.Config.AMQP, "orders_wsnode"); n != -1 {
		t.Errorf("the shared broker has a queue orders_wsnode (%d ready): the lesson did not use the participant's node", n)
	}
	tm.client.Close()
	deadline = time.Now().Add(30 * time.Second)
	for {
		_, err := os.Stat(set)
		if len(nodeProcs(set)) == 0 && os.IsNotExist(err) && len(srv.Participants()) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the drop: node processes %v, folder %s still there: %v, participants %v", nodeProcs(set), set, err == nil, srv.Participants())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestWithoutOwnBrokerAParticipantsNodesStepIsSkippedAndSaysWhy: lab serve
// without --own-broker starts no node for anyone; the step says why and the
// lesson goes on against the shared broker.
func TestWithoutOwnBrokerAParticipantsNodesStepIsSkippedAndSaysWhy(t *testing.T) {
	base := nodesBase(t)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	addr, _ := start(t, workshop.Config{Seats: 2, LessonsDir: "testdata/node-lessons"})
	tm := connect(t, addr, "wsnonode")
	tm.until(t, "the screen", hasScreen)
	tm.in.Write([]byte("\r"))
	tm.until(t, "the skipped nodes step", func(s string) bool { return strings.Contains(s, "--own-broker") })
	if p := nodeProcs(filepath.Join(base, "wsnonode")); len(p) > 0 {
		t.Errorf("node processes started without --own-broker: %v", p)
	}
}

// readyAt is the queue's ready count at the broker at url, -1 when the
// broker has no such queue.
func readyAt(t *testing.T, url, queue string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := services.DialAMQP(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		return -1 // 404: the channel is closed with it
	}
	ch.Close()
	return q.Messages
}

package workshop_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/workshop"
)

// nodesBase points the lab's node sets at a fresh folder for the test
// (labtest.NodesDir: under LAB_NODES_DIR when that is set, as a server
// script in a chroot sees only what is inside it).
func nodesBase(t *testing.T) string { return labtest.NodesDir(t) }

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
	svc := connectServices(t)
	if !svc.Info.OwnBroker {
		t.Fatalf("this machine should let the lab own nodes: %s", svc.Info.OwnBrokerNote)
	}
	addr, srv := start(t, workshop.Config{Seats: 2, Services: svc, LessonsDir: "testdata/node-lessons", OwnBroker: true})
	nn := who(t, "no")
	tm := connect(t, addr, nn)
	tm.until(t, "the screen", hasScreen)
	set := filepath.Join(base, nn)
	tm.in.Write([]byte("\r")) // nodes start=1
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(tm.text(), "enter: run step 2/6") || len(nodeProcs(set)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no node of %s's own started in %s (processes %v); the terminal shows:\n%s", nn, set, nodeProcs(set), tail(tm.text()))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The message is on the participant's node, and not on the shared broker.
	m := regexp.MustCompile(`rmlab-` + nn + `-1@localhost \| 127\.0\.0\.1:(\d+)`).FindStringSubmatch(tm.text())
	if m == nil {
		t.Fatalf("the nodes step shows no address for %s's node:\n%s", nn, tail(tm.text()))
	}
	for range 2 { // declare, publish: against the participant's node
		tm.in.Write([]byte("\r"))
		time.Sleep(1500 * time.Millisecond)
	}
	deadline = time.Now().Add(15 * time.Second)
	orders := "orders_" + nn
	for readyAt(t, "amqp://guest:guest@127.0.0.1:"+m[1]+"/", orders) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%s's node never held the lesson's message in %s; the terminal shows:\n%s", nn, orders, tail(tm.text()))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := readyAt(t, svc.Config.AMQP, orders); n != -1 {
		t.Errorf("the shared broker has a queue %s (%d ready): the lesson did not use the participant's node", orders, n)
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
	addr, _ := start(t, workshop.Config{Seats: 2, LessonsDir: "testdata/node-lessons"})
	nn := who(t, "nn")
	tm := connect(t, addr, nn)
	tm.until(t, "the screen", hasScreen)
	tm.in.Write([]byte("\r"))
	tm.until(t, "the skipped nodes step", func(s string) bool { return strings.Contains(s, "--own-broker") })
	if p := nodeProcs(filepath.Join(base, nn)); len(p) > 0 {
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

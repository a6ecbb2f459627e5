package labtest

import (
	"os"
	"testing"

	"github.com/rmlab/lab/internal/node"
)

// NodesDir gives the test a folder of its own for RabbitMQ nodes of the
// lab's own and points LAB_NODES_DIR at it for the test (the lab and the
// workers it starts read it), so that what a test checks about "no node
// left" is about its own nodes only, whatever other packages run beside
// it. Under the LAB_NODES_DIR the process was given, when set: a server
// script in a chroot (.ci/servers) sees only what is inside it. Removed
// when the test ends.
func NodesDir(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	if d := os.Getenv("LAB_NODES_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		var err error
		if base, err = os.MkdirTemp(d, "labtest"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(base) })
	}
	t.Setenv("LAB_NODES_DIR", base)
	return base
}

// NodeServer is RabbitMQ's server script the lab starts its own nodes
// from (LAB_RABBITMQ_SERVER, else /usr/lib/rabbitmq/bin/rabbitmq-server).
// Without it the test fails, saying how to install it; with
// LAB_OWN_BROKER=off (nodes of the lab's own turned off on purpose) it is
// skipped.
func NodeServer(t testing.TB) string {
	t.Helper()
	s, err := node.Server()
	if err == nil {
		return s
	}
	switch os.Getenv("LAB_OWN_BROKER") {
	case "off", "0", "false":
		t.Skipf("labtest: %v", err)
	}
	t.Fatalf("labtest: the lab cannot start RabbitMQ nodes of its own: %v (or LAB_OWN_BROKER=off to skip these tests)", err)
	return ""
}

package services_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/containers"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// A container whose server hangs while it starts (CI saw MySQL's stop in
// InnoDB's start for three minutes) must say more than "deadline
// exceeded": its log's last lines and what each of its processes is doing.
// Both come from the container, so an escape in them never reaches the
// terminal.
func TestAContainerThatDoesNotStartSaysWhatItsProcessesDoInPlainText(t *testing.T) {
	labtest.Docker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The server stand-in: a line with a title-setting escape, then a
	// child stopped (T) as a hung server's would be.
	script := `printf 'booting \033]0;owned\007the server\n'; sleep 600 & kill -STOP $!; wait`
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image:      services.RedisImage,
			Entrypoint: []string{"/bin/sh", "-c", script},
			Labels:     containers.Owner("redis"),
			WaitingFor: wait.ForLog("ready to accept connections").WithStartupTimeout(4 * time.Second),
		},
		Started: true,
	})
	if c != nil {
		defer testcontainers.TerminateContainer(c, testcontainers.StopTimeout(0)) // its child is stopped: nothing to wait for
	}
	if err == nil {
		t.Fatal("the container that never says it is ready started")
	}
	msg := services.WithLog(err, c).Error()
	if strings.ContainsAny(msg, "\x1b\x07") {
		t.Errorf("an escape from the container's log reached the message: %q", msg)
	}
	if !strings.Contains(msg, "booting the server") {
		t.Errorf("the container's log line is not in the message:\n%s", msg)
	}
	stopped := false
	for _, l := range strings.Split(msg, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && strings.HasPrefix(f[1], "T") {
			stopped = true
		}
	}
	if !stopped {
		t.Errorf("the message does not say the stopped process is stopped (T):\n%s", msg)
	}
}

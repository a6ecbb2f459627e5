package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/containers"
)

// engine is the Docker engine DOCKER_HOST names. Without one the container
// tests skip, unless LAB_REQUIRE_DOCKER=1 (CI's container part, on the
// engine .ci/docker starts) makes that a failure.
func engine(t *testing.T) containers.Engine {
	t.Helper()
	e, ok := containers.FromEnv()
	if ok && e.Answers(context.Background()) {
		return e
	}
	if os.Getenv("LAB_REQUIRE_DOCKER") == "1" {
		t.Fatalf("LAB_REQUIRE_DOCKER=1 and no Docker engine answers at %s (bash .ci/docker up; eval \"$(.ci/docker env)\")", e.Socket)
	}
	t.Skipf("no Docker engine answers at %s (LAB_REQUIRE_DOCKER=1 makes this a failure)", e.Socket)
	return e
}

// ownedBy lists the lab's containers whose owner is process pid.
func ownedBy(t *testing.T, e containers.Engine, pid int) []containers.Container {
	t.Helper()
	cs, err := e.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []containers.Container
	for _, c := range cs {
		if c.Labels[containers.LabelPID] == strconv.Itoa(pid) {
			out = append(out, c)
		}
	}
	return out
}

// startWithContainers starts `lab replay LESSONS --containers` and returns
// once it said it started the three services, with what it wrote so far.
func startWithContainers(t *testing.T, lessons ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(labBin(t), append(append([]string{"replay"}, lessons...), "--containers", "--namespace", "ctr")...)
	cmd.Env = append(os.Environ(), "LAB_CONTAINERS=")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	var seen bytes.Buffer
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// SIGTERM, not SIGKILL: the lab removes its containers on the way out,
	// and this test leaves none behind.
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
		}
	})
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		n := 0
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "in a container") {
				if n++; n == 3 {
					close(started)
				}
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the lab did not start its three containers within 4 minutes:\n%s", seen.String())
	}
	return cmd, &seen
}

// Asked for containers, the lab starts MySQL, RabbitMQ and Redis in them,
// says so (image, address, time taken), runs the lesson against them, and
// removes them when it ends; after SIGINT or SIGTERM too.
func TestTheLabRunsInContainersItStartsAndRemovesThem(t *testing.T) {
	e := engine(t)
	for _, c := range []struct {
		name    string
		lessons []string
		sig     syscall.Signal // 0: let the replay finish
	}{
		{"finished", []string{"1", "13"}, 0},
		// A lesson that waits a minute: the signal comes mid-run.
		{"SIGINT", []string{"testdata/long-worker.md"}, syscall.SIGINT},
		{"SIGTERM", []string{"testdata/long-worker.md"}, syscall.SIGTERM},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, seen := startWithContainers(t, c.lessons...)
			pid := cmd.Process.Pid
			if got := ownedBy(t, e, pid); len(got) != 3 {
				t.Fatalf("%d containers carry the lab's label for pid %d, want 3", len(got), pid)
			}
			for _, want := range []string{"MySQL (mysql:8.4) at 127.0.0.1:", "RabbitMQ (rabbitmq:4-management) at", "Redis (redis:7) at", "ready in"} {
				if !strings.Contains(seen.String(), want) {
					t.Errorf("the lab did not say %q:\n%s", want, seen.String())
				}
			}
			if c.sig != 0 {
				cmd.Process.Signal(c.sig)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if c.sig == 0 && err != nil {
					t.Errorf("lab replay 13 in containers: %v\n%s", err, seen.String())
				}
				if c.sig == 0 && (!strings.Contains(seen.String(), "PASS  1") || !strings.Contains(seen.String(), "PASS 13")) {
					t.Errorf("lessons 1 and 13 did not pass in containers:\n%s", seen.String())
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("the lab did not end within 2 minutes\n%s", seen.String())
			}
			if left := ownedBy(t, e, pid); len(left) > 0 {
				t.Errorf("%d containers outlived the lab: %v", len(left), left)
			}
		})
	}
}

// A lab killed with SIGKILL cannot remove its containers: the next lab
// that starts containers does, and so does lab clean, each saying which; a
// live lab's containers are left alone.
func TestLabCleanSweepsTheContainersOfAKilledLab(t *testing.T) {
	e := engine(t)
	first, _ := startWithContainers(t, "testdata/long-worker.md")
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	_, errOut, code := runLab(t, "doctor", "--containers")
	if code != 0 {
		t.Fatalf("lab doctor --containers: exit %d\n%s", code, errOut)
	}
	if n := strings.Count(errOut, "left by lab process "+strconv.Itoa(first.Process.Pid)); n != 3 {
		t.Errorf("the next lab swept %d containers of the killed one, want 3:\n%s", n, errOut)
	}
	if left := ownedBy(t, e, first.Process.Pid); len(left) > 0 {
		t.Errorf("the next lab left %d containers of the killed one", len(left))
	}

	live, _ := startWithContainers(t, "testdata/long-worker.md")
	dead, _ := startWithContainers(t, "testdata/long-worker.md")
	dead.Process.Signal(syscall.SIGKILL)
	dead.Wait()
	if got := ownedBy(t, e, dead.Process.Pid); len(got) != 3 {
		t.Fatalf("after SIGKILL %d containers of the dead lab remain, want its 3", len(got))
	}
	out, errOut, code := runLab(t, "clean", "--namespace", "ctr")
	if code != 0 {
		t.Fatalf("lab clean: exit %d\n%s%s", code, out, errOut)
	}
	if n := strings.Count(out, "left by lab process "+strconv.Itoa(dead.Process.Pid)); n != 3 {
		t.Errorf("lab clean named %d containers of the dead lab, want 3:\n%s", n, out)
	}
	if left := ownedBy(t, e, dead.Process.Pid); len(left) > 0 {
		t.Errorf("lab clean left %d containers of the dead lab", len(left))
	}
	if got := ownedBy(t, e, live.Process.Pid); len(got) != 3 {
		t.Errorf("lab clean removed a live lab's containers: %d left of 3", len(got))
	}
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math/bits"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/internal/containers"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

// engine is the Docker engine DOCKER_HOST names (labtest.Docker).
func engine(t *testing.T) containers.Engine { return labtest.Docker(t) }

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

// startWithContainers starts `lab replay LESSONS --containers=SET` in a
// namespace of its own and returns once it said it started SET's services
// (the others are the test's servers), with what it wrote so far.
func startWithContainers(t *testing.T, set services.InContainers, lessons ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	ns := labtest.Connect(t).NS
	cmd := exec.Command(labBin(t), append(append([]string{"replay"}, lessons...), "--containers="+set.String(), "--namespace", ns)...)
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
				if n++; n == count(set) {
					close(started)
				}
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the lab did not start its %d containers (%s) within 4 minutes:\n%s", count(set), set, seen.String())
	}
	return cmd, &seen
}

// count is how many services set puts in containers.
func count(set services.InContainers) int {
	return bits.OnesCount8(uint8(set))
}

// The lifecycle tests (signals, a reader gone, go run, a SIGKILLed lab
// swept) hold for any container the lab starts: they start Redis alone,
// which boots in a second, beside the test's MySQL and RabbitMQ. The
// finished replay and CI's laptop start all three.
const oneBox = services.RedisInContainer

// Asked for containers, the lab starts MySQL, RabbitMQ and Redis in them,
// says so (image, address, time taken), runs the lesson against them, and
// removes them when it ends; after SIGINT or SIGTERM too.
func TestTheLabRunsInContainersItStartsAndRemovesThem(t *testing.T) {
	e := engine(t)
	for _, c := range []struct {
		name    string
		set     services.InContainers
		lessons []string
		sig     syscall.Signal // 0: let the replay finish
	}{
		// Lesson 6 prints Redis keys that hold "lab": a container's
		// password must not be a word the output holds (it is hidden).
		{"finished", services.AllInContainers, []string{"1", "6", "13"}, 0},
		// A lesson that waits a minute: the signal comes mid-run.
		{"SIGINT", oneBox, []string{"testdata/long-worker.md"}, syscall.SIGINT},
		{"SIGTERM", oneBox, []string{"testdata/long-worker.md"}, syscall.SIGTERM},
		{"SIGHUP", oneBox, []string{"testdata/long-worker.md"}, syscall.SIGHUP}, // the terminal closed
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, seen := startWithContainers(t, c.set, c.lessons...)
			pid := cmd.Process.Pid
			if got := ownedBy(t, e, pid); len(got) != count(c.set) {
				t.Fatalf("%d containers carry the lab's label for pid %d, want %d (%s)", len(got), pid, count(c.set), c.set)
			}
			for _, w := range []struct {
				bit  services.InContainers
				line string
			}{{services.MySQLInContainer, "MySQL (mysql:8.4) at 127.0.0.1:"}, {services.RabbitMQInContainer, "RabbitMQ (rabbitmq:4-management) at"}, {services.RedisInContainer, "Redis (redis:7) at"}} {
				if said := strings.Contains(seen.String(), w.line); said != (c.set&w.bit != 0) {
					t.Errorf("the lab said %q: %t, with --containers=%s:\n%s", w.line, said, c.set, seen.String())
				}
			}
			if !strings.Contains(seen.String(), "ready in") {
				t.Errorf("the lab did not say how long its containers took:\n%s", seen.String())
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
				if c.sig == 0 && (!strings.Contains(seen.String(), "PASS  1") || !strings.Contains(seen.String(), "PASS  6") || !strings.Contains(seen.String(), "PASS 13")) {
					t.Errorf("lessons 1, 6 and 13 did not pass in containers:\n%s", seen.String())
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

// A reader that goes away (lab doctor --containers | head -4) must not kill
// the lab before it removes its containers: a write to the closed pipe
// fails, and the lab stops as after Ctrl-C.
func TestALabWhoseReaderIsGoneRemovesItsContainers(t *testing.T) {
	e := engine(t)
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR.Close() // the reader of stdout is gone before the lab writes
	cmd := exec.Command(labBin(t), "doctor", "--containers="+oneBox.String(), "--namespace", "ctr")
	cmd.Env = append(os.Environ(), "LAB_CONTAINERS=")
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	stderr, _ := io.ReadAll(errR) // until the lab exits
	state, _ := cmd.Process.Wait()
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Errorf("the lab was killed by %v\n%s", ws.Signal(), stderr)
	}
	if n := strings.Count(string(stderr), "in a container"); n != count(oneBox) {
		t.Errorf("the lab said %d services started in a container, want %d:\n%s", n, count(oneBox), stderr)
	}
	if left := ownedBy(t, e, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("%d containers outlived a lab whose reader was gone: %v\n%s", len(left), left, stderr)
	}
}

// Under go run, a signal sent to the go command (timeout, kill) never
// reaches the lab it runs: the lab ends when go does, and removes its
// containers.
func TestALabUnderGoRunEndsWithTheGoCommand(t *testing.T) {
	e := engine(t)
	goCmd := exec.Command("go", "run", ".", "replay", "testdata/long-worker.md", "--containers="+oneBox.String(), "--namespace", labtest.Connect(t).NS)
	goCmd.Env = append(os.Environ(), "LAB_CONTAINERS=")
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	goCmd.Stderr = errW
	if err := goCmd.Start(); err != nil {
		t.Fatal(err)
	}
	errW.Close()
	t.Cleanup(func() { goCmd.Process.Kill(); goCmd.Wait() })
	var seen strings.Builder
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(errR)
		n := 0
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "in a container") {
				if n++; n == count(oneBox) {
					close(started)
				}
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(4 * time.Minute):
		t.Fatalf("the lab did not start its container (%s) within 4 minutes", oneBox)
	}
	lab := childOf(t, goCmd.Process.Pid)
	goCmd.Process.Signal(syscall.SIGTERM)
	goCmd.Wait()
	for deadline := time.Now().Add(2 * time.Minute); alive(lab); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(lab, syscall.SIGTERM)
			t.Fatalf("the lab (pid %d) outlived the go command by 2 minutes", lab)
		}
	}
	if left := ownedBy(t, e, lab); len(left) > 0 {
		t.Errorf("%d containers outlived a lab whose go command was stopped: %v", len(left), left)
	}
}

// childOf is the pid of parent's one child process.
func childOf(t *testing.T, parent int) int {
	t.Helper()
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(parent) {
			return pid
		}
	}
	t.Fatalf("process %d has no child", parent)
	return 0
}

// alive reports whether pid runs (a zombie nobody reaped yet does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// A lab killed with SIGKILL cannot remove its containers: the next lab
// that starts containers does, and so does lab clean, each saying which; a
// live lab's containers are left alone.
func TestLabCleanSweepsTheContainersOfAKilledLab(t *testing.T) {
	e := engine(t)
	n := count(oneBox)
	first, _ := startWithContainers(t, oneBox, "testdata/long-worker.md")
	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	_, errOut, code := runLab(t, "doctor", "--containers="+oneBox.String())
	if code != 0 {
		t.Fatalf("lab doctor --containers: exit %d\n%s", code, errOut)
	}
	if got := strings.Count(errOut, "left by lab process "+strconv.Itoa(first.Process.Pid)); got != n {
		t.Errorf("the next lab swept %d containers of the killed one, want %d:\n%s", got, n, errOut)
	}
	if left := ownedBy(t, e, first.Process.Pid); len(left) > 0 {
		t.Errorf("the next lab left %d containers of the killed one", len(left))
	}

	live, _ := startWithContainers(t, oneBox, "testdata/long-worker.md")
	dead, _ := startWithContainers(t, oneBox, "testdata/long-worker.md")
	dead.Process.Signal(syscall.SIGKILL)
	dead.Wait()
	if got := ownedBy(t, e, dead.Process.Pid); len(got) != n {
		t.Fatalf("after SIGKILL %d containers of the dead lab remain, want its %d", len(got), n)
	}
	out, errOut, code := runLab(t, "clean", "--namespace", "ctr")
	if code != 0 {
		t.Fatalf("lab clean: exit %d\n%s%s", code, out, errOut)
	}
	if got := strings.Count(out, "left by lab process "+strconv.Itoa(dead.Process.Pid)); got != n {
		t.Errorf("lab clean named %d containers of the dead lab, want %d:\n%s", got, n, out)
	}
	if left := ownedBy(t, e, dead.Process.Pid); len(left) > 0 {
		t.Errorf("lab clean left %d containers of the dead lab", len(left))
	}
	if got := ownedBy(t, e, live.Process.Pid); len(got) != n {
		t.Errorf("lab clean removed a live lab's containers: %d left of %d", len(got), n)
	}
}

// A server the user named is never replaced by a container, even where a
// Docker engine answers: one still booting (docker compose up without
// --wait) is awaited, with a line saying so, and then used.
func TestANamedServerStillBootingIsAwaitedNotReplaced(t *testing.T) {
	t.Parallel()
	e := engine(t)
	real, err := gomysql.ParseDSN(services.Config{}.FromEnv().MySQL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing answers there for the first seconds
	go func() {
		time.Sleep(5 * time.Second)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return // the lab would wait in vain: the test fails below
		}
		t.Cleanup(func() { ln.Close() })
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", real.Addr)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	named := *real
	named.Addr = addr
	cmd := exec.Command(labBin(t), "doctor", "--mysql", named.FormatDSN(), "--namespace", "ctr")
	cmd.Env = append(os.Environ(), "LAB_CONTAINERS=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if strings.Contains(errOut.String(), "as a container") || strings.Contains(errOut.String(), "mysql:8.4") {
		t.Errorf("the lab started a container in place of the server --mysql named:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "waiting for MySQL at "+addr+" (named by --mysql)") || !strings.Contains(errOut.String(), "answered after") {
		t.Errorf("the lab did not say it waited for the named server:\n%s", errOut.String())
	}
	if err != nil || !strings.Contains(out.String(), addr) {
		t.Errorf("lab doctor: %v; want it to report the named server at %s:\n%s%s", err, addr, out.String(), errOut.String())
	}
	if left := ownedBy(t, e, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("%d containers of the lab's are left: %v", len(left), left)
	}
}

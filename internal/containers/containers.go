// Package containers is the lab's side of a Docker engine: whether one
// answers, the labels that mark what the lab starts, and the sweep that
// removes what a lab that died left behind. The lab does not rely on
// testcontainers' reaper (Ryuk): its image cannot always be pulled, and a
// lab must clean up after itself on a machine with no registry. It removes
// its containers on exit and on signals (services.Close), and a lab killed
// with SIGKILL is swept by the next lab that starts containers, and by
// `lab clean`.
package containers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Labels every container the lab starts carries.
const (
	LabelLab  = "rmlab.lab"  // "1": the lab started it
	LabelPID  = "rmlab.pid"  // the lab process that owns it
	LabelHost = "rmlab.host" // the machine that process runs on
	LabelBoot = "rmlab.boot" // that machine's boot id: a pid after a reboot is another process
	// LabelStart is when the owner process started (clock ticks after
	// boot, /proc/PID/stat): a pid that was reused starts at another time.
	LabelStart = "rmlab.start"
	LabelWhat  = "rmlab.what" // mysql, rabbitmq or redis
)

// Engine is a Docker engine reached over its unix socket.
type Engine struct {
	Socket string
}

// FromEnv is the engine DOCKER_HOST names (unix sockets only), or the
// default socket. ok is false for a TCP DOCKER_HOST: the lab does not
// sweep an engine it reaches over the network.
func FromEnv() (Engine, bool) {
	h := os.Getenv("DOCKER_HOST")
	if h == "" {
		return Engine{Socket: "/var/run/docker.sock"}, true
	}
	p, ok := strings.CutPrefix(h, "unix://")
	return Engine{Socket: p}, ok
}

func (e Engine) client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", e.Socket)
	}}}
}

// Answers pings the engine (a second at most): a machine without one
// answers false in milliseconds.
func (e Engine) Answers(ctx context.Context) bool {
	if _, err := os.Stat(e.Socket); err != nil {
		return false
	}
	c, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(c, http.MethodGet, "http://docker/_ping", nil)
	resp, err := e.client().Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Owner is this process's labels: who to ask whether a container is still
// wanted.
func Owner(what string) map[string]string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return map[string]string{LabelLab: "1", LabelPID: strconv.Itoa(pid), LabelHost: host, LabelBoot: bootID(),
		LabelStart: startTime(pid), LabelWhat: what}
}

// startTime is process pid's start time from /proc (field 22 of its stat,
// after the command name, which may hold spaces), "" when it is gone.
func startTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Container is one container the lab started, as the engine lists it.
type Container struct {
	ID     string            `json:"Id"`
	Names  []string          `json:"Names"`
	Image  string            `json:"Image"`
	State  string            `json:"State"`
	Labels map[string]string `json:"Labels"`
}

// Name is the container's name without the leading slash.
func (c Container) Name() string {
	if len(c.Names) == 0 {
		return c.ID[:min(12, len(c.ID))]
	}
	return strings.TrimPrefix(c.Names[0], "/")
}

// List is every container (running or not) that carries the lab's label.
func (e Engine) List(ctx context.Context) ([]Container, error) {
	f, _ := json.Marshal(map[string][]string{"label": {LabelLab + "=1"}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/containers/json?all=1&filters="+url.QueryEscape(string(f)), nil)
	resp, err := e.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("list the lab's containers on %s: %w", e.Socket, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("list the lab's containers on %s: %s %s", e.Socket, resp.Status, strings.TrimSpace(string(b)))
	}
	var cs []Container
	if err := json.NewDecoder(resp.Body).Decode(&cs); err != nil {
		return nil, fmt.Errorf("list the lab's containers on %s: %w", e.Socket, err)
	}
	return cs, nil
}

// Remove stops and deletes a container with its anonymous volumes.
func (e Engine) Remove(ctx context.Context, id string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, "http://docker/containers/"+url.PathEscape(id)+"?force=1&v=1", nil)
	resp, err := e.client().Do(req)
	if err != nil {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotFound {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("remove container %s: %s %s", id, resp.Status, strings.TrimSpace(string(b)))
	}
	return nil
}

// Orphaned reports whether c's owner is gone: a lab on this machine whose
// process no longer runs (its pid free, or taken by a process that started
// at another time, or the machine rebooted since). A container of another machine's lab is never this one's to
// judge.
func Orphaned(c Container) bool {
	host, _ := os.Hostname()
	if c.Labels[LabelHost] != host {
		return false
	}
	if b := bootID(); b != "" && c.Labels[LabelBoot] != b {
		return true
	}
	pid, err := strconv.Atoi(c.Labels[LabelPID])
	if err != nil || pid <= 0 {
		return true
	}
	started := startTime(pid)
	// Gone, or the pid reused by a process that started at another time.
	return started == "" || started != c.Labels[LabelStart]
}

// Sweep removes the containers labs that died left on this machine,
// writing a line for each to w, and returns how many it removed.
func (e Engine) Sweep(ctx context.Context, w io.Writer) (int, error) {
	cs, err := e.List(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range cs {
		if !Orphaned(c) {
			continue
		}
		if err := e.Remove(ctx, c.ID); err != nil {
			return n, err
		}
		n++
		fmt.Fprintf(w, "removed container %s (%s, %s) left by lab process %s, which is gone\n", c.Name(), c.Labels[LabelWhat], c.Image, c.Labels[LabelPID])
	}
	return n, nil
}

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

	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Images the lab starts: the versions docker-compose.yml pins too.
const (
	MySQLImage  = "mysql:8.4"
	RabbitImage = "rabbitmq:4-management"
	RedisImage  = "redis:7"
)

// NoReaper switches testcontainers' reaper (Ryuk) off unless the user set
// it: the lab removes its own containers (on exit, on signals, and the sweep
// of what a killed lab left), and Ryuk's image cannot be pulled everywhere.
// Its log (a line per container step, with emoji) would land on the screen:
// the lab says what it started itself.
func NoReaper() {
	if _, set := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !set {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	tclog.SetDefault(tclog.NewNoopLogger())
}

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

// PingLimit bounds the engine's answer to a ping once its socket accepts:
// an engine busy starting other containers on a loaded machine took more
// than a second (CI's laptop lost lesson 19 to a 1 s ping); a machine
// without an engine still answers false at once (no socket, or a refused
// connection).
var PingLimit = 15 * time.Second

// Answers pings the engine: false at once where nothing listens on its
// socket, else whether it answers within PingLimit.
func (e Engine) Answers(ctx context.Context) bool {
	if _, err := os.Stat(e.Socket); err != nil {
		return false
	}
	c, cancel := context.WithTimeout(ctx, PingLimit)
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
	var cs []Container
	err := e.labelled(ctx, "/containers/json?all=1&", "containers", &cs)
	return cs, err
}

// labelled GETs path with a filter on the lab's label and decodes the
// engine's list into out.
func (e Engine) labelled(ctx context.Context, path, what string, out any) error {
	f, _ := json.Marshal(map[string][]string{"label": {LabelLab + "=1"}})
	return e.getJSON(ctx, path+"filters="+url.QueryEscape(string(f)), "list the lab's "+what+" on "+e.Socket, out)
}

// getJSON GETs path and decodes the engine's answer (at most 8 MiB) into
// out; its errors begin with doing.
func (e Engine) getJSON(ctx context.Context, path, doing string, out any) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker"+path, nil)
	resp, err := e.client().Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s %s", doing, resp.Status, strings.TrimSpace(string(b)))
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 8<<20)).Decode(out); err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return nil
}

// Remove stops and deletes a container with its anonymous volumes.
func (e Engine) Remove(ctx context.Context, id string) error {
	return e.do(ctx, http.MethodDelete, "/containers/"+url.PathEscape(id)+"?force=1&v=1", "remove container "+id, http.StatusNoContent, http.StatusNotFound)
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
	// Then the networks of its nodes in containers, now empty.
	nets, err := e.Networks(ctx)
	if err != nil {
		return n, err
	}
	for _, nw := range nets {
		if !Orphaned(Container{Labels: nw.Labels}) {
			continue
		}
		if err := e.RemoveNetwork(ctx, nw.ID); err != nil {
			return n, err
		}
		n++
		fmt.Fprintf(w, "removed network %s (%s) left by lab process %s, which is gone\n", nw.Name, nw.Labels[LabelWhat], nw.Labels[LabelPID])
	}
	return n, nil
}

// do sends one request to the engine; codes are the statuses that mean it
// went as asked.
func (e Engine) do(ctx context.Context, method, path, what string, codes ...int) error {
	req, _ := http.NewRequestWithContext(ctx, method, "http://docker"+path, nil)
	resp, err := e.client().Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	for _, c := range codes {
		if resp.StatusCode == c {
			return nil
		}
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("%s: %s %s", what, resp.Status, strings.TrimSpace(string(b)))
}

// Kill sends the container's process SIGKILL: nothing is flushed.
func (e Engine) Kill(ctx context.Context, id string) error {
	return e.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/kill?signal=KILL", "docker kill "+id, http.StatusNoContent)
}

// Stop sends SIGTERM and waits up to grace for the process to end (then
// the engine kills it).
func (e Engine) Stop(ctx context.Context, id string, grace time.Duration) error {
	return e.do(ctx, http.MethodPost, fmt.Sprintf("/containers/%s/stop?t=%d", url.PathEscape(id), int(grace.Seconds())), "docker stop "+id,
		http.StatusNoContent, http.StatusNotModified)
}

// Start starts a stopped container again, on its own filesystem.
func (e Engine) Start(ctx context.Context, id string) error {
	return e.do(ctx, http.MethodPost, "/containers/"+url.PathEscape(id)+"/start", "docker start "+id, http.StatusNoContent, http.StatusNotModified)
}

// Network is a network the lab created (the nodes of a cluster in
// containers share one).
type Network struct {
	ID     string            `json:"Id"`
	Name   string            `json:"Name"`
	Labels map[string]string `json:"Labels"`
}

// Networks is every network that carries the lab's label.
func (e Engine) Networks(ctx context.Context) ([]Network, error) {
	var ns []Network
	err := e.labelled(ctx, "/networks?", "networks", &ns)
	return ns, err
}

// RemoveNetwork deletes a network (its containers must be gone).
func (e Engine) RemoveNetwork(ctx context.Context, id string) error {
	return e.do(ctx, http.MethodDelete, "/networks/"+url.PathEscape(id), "remove network "+id, http.StatusNoContent, http.StatusNotFound)
}

// Top is what the container's processes are doing, as the engine's ps on
// the host sees them: pid, state (R running, S sleeping, D waiting on the
// disk, T stopped), where in the kernel it sleeps, how long it has run and
// its command. A start that hangs says which of these it is.
func (e Engine) Top(ctx context.Context, id string) ([]string, error) {
	q := url.Values{"ps_args": {"-o pid,stat,wchan:24,etime,comm"}}
	var top struct {
		Titles    []string
		Processes [][]string
	}
	if err := e.getJSON(ctx, "/containers/"+url.PathEscape(id)+"/top?"+q.Encode(), "docker top "+id, &top); err != nil {
		return nil, err
	}
	out := []string{strings.Join(top.Titles, " ")}
	for _, p := range top.Processes {
		out = append(out, strings.Join(p, " "))
	}
	return out, nil
}

// Package node runs RabbitMQ nodes the lab owns: one, or a cluster of
// three, on free loopback ports, with node names and a data folder per
// namespace under the user's cache directory. Owning them is what lets a
// lesson restart a broker or kill a cluster node on any machine, shared
// brokers included: the lab never stops or kills a broker it did not start.
//
// The nodes are started from RabbitMQ's own server script (the one under
// /usr/lib/rabbitmq/bin, not Debian's wrapper, which switches user and drops
// the environment) so that the script execs the Erlang VM in place: the
// process the lab starts is the node, and the kernel kills it when the lab
// dies (Pdeathsig), SIGKILL of the lab included. Each set of nodes has its
// own epmd, started the same way, so no Erlang daemon is left behind.
package node

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// DefaultServer is RabbitMQ's server script as Debian installs it.
const DefaultServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// markerEnv is set on every process the lab starts for its nodes, naming
// the set's folder: Sweep finds leftovers by it.
const markerEnv = "LAB_NODE_SET"

// Marker is the environment entry that marks a process as living in the
// lab-owned folder dir: Sweep kills what carries it once the folder's lab
// has gone, and CI looks for it after a run. Package dbnode marks its
// MySQL server the same way.
func Marker(dir string) string { return markerEnv + "=" + dir }

// Options say which nodes to start.
type Options struct {
	Namespace string // node names and folder; "" is the article's names
	Nodes     int    // 1, or 3 for a cluster
	Dir       string // where sets live; default Dir()
	Server    string // rabbitmq-server script; default Server()
	// Containers: the nodes are containers of the lab's RabbitMQ image
	// (StartContainers), not processes of the script.
	Containers bool
}

// State is a node's state as the lab left it.
type State string

const (
	Running State = "running"
	Killed  State = "killed"  // SIGKILL: nothing was flushed
	Stopped State = "stopped" // shut down cleanly
)

// Node is one lab-owned RabbitMQ node.
type Node struct {
	N     int    // 1-based, as lessons name it
	Name  string // Erlang node name, e.g. rmlab-ns-1@localhost
	Port  int    // AMQP, on 127.0.0.1
	Dist  int    // Erlang distribution
	dir   string
	env   []string
	state State
	cmd   *exec.Cmd
	done  chan struct{} // closed when cmd has exited
	url   string        // an attached cluster's node: its URL as given
}

// URL is the node's AMQP address (the default guest user: RabbitMQ lets it
// in from loopback).
func (n *Node) URL() string {
	if n.url != "" {
		return n.url
	}
	return fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", n.Port)
}

// Set is the lab's nodes for one namespace: one node or a cluster.
type Set struct {
	Dir      string
	Version  string // RabbitMQ's, from the server's banner
	mu       sync.Mutex
	nodes    []*Node
	epmd     *exec.Cmd
	epmdDone chan struct{}
	lock     *os.File
	server   string
	ctl      control // nodes that are not processes of the lab's: what kills, stops and starts them
	scripts  string  // RABBITMQ_SCRIPTS_DIR of the slim home, "" for the installed one
	closed   bool
}

// Dir is where the lab keeps its nodes' folders:
// $XDG_CACHE_HOME/rmlab/nodes (default ~/.cache/rmlab/nodes), or
// LAB_NODES_DIR (a server script run in a chroot needs them inside it).
func Dir() (string, error) {
	if d := os.Getenv("LAB_NODES_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the lab's broker nodes: %w (set XDG_CACHE_HOME)", err)
	}
	return filepath.Join(d, "rmlab", "nodes"), nil
}

// Server finds RabbitMQ's server script, or says why the lab cannot own
// nodes on this machine. LAB_RABBITMQ_SERVER names another script;
// LAB_OWN_BROKER=off says the lab must not start any.
func Server() (string, error) {
	if v := os.Getenv("LAB_OWN_BROKER"); v == "off" || v == "0" || v == "false" {
		return "", fmt.Errorf("LAB_OWN_BROKER=%s: the lab starts no RabbitMQ nodes of its own here", v)
	}
	s := os.Getenv("LAB_RABBITMQ_SERVER")
	if s == "" {
		s = DefaultServer
	}
	if fi, err := os.Stat(s); err != nil || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("no RabbitMQ server script at %s (install rabbitmq-server, or set LAB_RABBITMQ_SERVER to its rabbitmq-server under lib/rabbitmq/bin)", s)
	}
	if os.Getenv("LAB_RABBITMQ_SERVER") == "" {
		if _, err := exec.LookPath("erl"); err != nil {
			return "", fmt.Errorf("RabbitMQ's script is at %s but Erlang's erl is not on PATH", s)
		}
	}
	return s, nil
}

// setName is the folder and node-name part for a namespace.
func setName(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// Start starts the nodes and returns once every one accepts AMQP
// connections (a cluster forms while its nodes boot: each names the others
// in its config). Call Close when done; it is safe after a failed Start.
func Start(ctx context.Context, o Options) (*Set, error) {
	if o.Containers {
		return StartContainers(ctx, o)
	}
	// A port chosen free can be taken before the node binds it (by another
	// node booting, or an outgoing connection's local port): try again
	// with other ports.
	for attempt := 1; ; attempt++ {
		s, err := start(ctx, o)
		if err == nil || attempt == 3 || ctx.Err() != nil || !portTaken(err) {
			return s, err
		}
	}
}

// portTaken is a boot that failed because a port it was given was taken.
func portTaken(err error) bool {
	m := err.Error()
	return strings.Contains(m, "already_used") || strings.Contains(m, "eaddrinuse") || strings.Contains(m, "address already in use")
}

func start(ctx context.Context, o Options) (*Set, error) {
	if o.Nodes != 1 && o.Nodes != 3 {
		return nil, fmt.Errorf("lab-owned broker: %d nodes asked; the lab starts 1 or 3", o.Nodes)
	}
	server := o.Server
	if server == "" {
		var err error
		if server, err = Server(); err != nil {
			return nil, err
		}
	}
	base := o.Dir
	if base == "" {
		var err error
		if base, err = Dir(); err != nil {
			return nil, err
		}
	}
	name := setName(o.Namespace)
	s := &Set{Dir: filepath.Join(base, name), server: server}
	if err := s.claim(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	ports, err := FreePorts(1 + 2*o.Nodes)
	if err != nil {
		return nil, err
	}
	if err := s.prepare(); err != nil {
		return nil, err
	}
	epmdPort := ports[0]
	if err := s.startEpmd(epmdPort); err != nil {
		return nil, err
	}
	var names []string
	for i := range o.Nodes {
		names = append(names, fmt.Sprintf("rmlab-%s-%d@localhost", name, i+1))
	}
	for i := range o.Nodes {
		n := &Node{N: i + 1, Name: names[i], Port: ports[1+2*i], Dist: ports[2+2*i], dir: filepath.Join(s.Dir, "n"+strconv.Itoa(i+1))}
		if err := s.configure(n, names, epmdPort); err != nil {
			return nil, err
		}
		s.nodes = append(s.nodes, n)
	}
	for _, n := range s.nodes {
		if err := s.spawn(n); err != nil {
			return nil, err
		}
	}
	for _, n := range s.nodes {
		if err := s.await(ctx, n); err != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// claim takes the set's folder: a lock held while this process owns the
// nodes (the kernel drops it when the process dies, however it dies), then
// clears what an earlier owner that died left there.
func (s *Set) claim() error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("lab-owned broker: create %s: %w", s.Dir, err)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("lab-owned broker: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return fmt.Errorf("lab-owned broker: another lab in this namespace owns the nodes in %s (use another --namespace, or end that lab)", s.Dir)
	}
	s.lock = f
	kill(s.Dir) // an earlier owner's, should the kernel not have
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if e.Name() != "lock" {
			os.RemoveAll(filepath.Join(s.Dir, e.Name()))
		}
	}
	return nil
}

// prepare writes what every node of the set shares: the Erlang cookie (in
// HOME, where the VM reads it) and an empty plugin list (no management
// plugin: the lab reads these nodes over AMQP, and they boot faster).
func (s *Set) prepare() error {
	if err := os.WriteFile(filepath.Join(s.Dir, ".erlang.cookie"), []byte(strings.ToUpper(rand.Text())), 0o400); err != nil {
		return fmt.Errorf("lab-owned broker: %w", err)
	}
	// Where no slim home can be built the nodes boot from the installed
	// one, only slower.
	if sc, err := slimHome(s.Dir, s.server); err == nil {
		s.scripts = sc
	}
	return os.WriteFile(filepath.Join(s.Dir, "enabled_plugins"), []byte("[].\n"), 0o600)
}

func (s *Set) configure(n *Node, names []string, epmdPort int) error {
	if err := os.MkdirAll(filepath.Join(n.dir, "log"), 0o700); err != nil {
		return fmt.Errorf("lab-owned broker: %w", err)
	}
	conf := fmt.Sprintf("listeners.tcp.default = 127.0.0.1:%d\n", n.Port)
	if len(names) > 1 {
		conf += "cluster_formation.peer_discovery_backend = classic_config\n"
		for i, nm := range names {
			conf += fmt.Sprintf("cluster_formation.classic_config.nodes.%d = %s\n", i+1, nm)
		}
	}
	cf := filepath.Join(n.dir, "rabbitmq.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		return fmt.Errorf("lab-owned broker: %w", err)
	}
	n.env = append(baseEnv(s.Dir, epmdPort),
		"RABBITMQ_NODENAME="+n.Name,
		"RABBITMQ_DIST_PORT="+strconv.Itoa(n.Dist),
		"RABBITMQ_CONFIG_FILE="+cf,
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(n.dir, "advanced.config"), // absent: none
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(n.dir, "rabbitmq-env.conf"),      // absent: not the host's
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(s.Dir, "enabled_plugins"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(n.dir, "data"),
		"RABBITMQ_LOG_BASE="+filepath.Join(n.dir, "log"),
		"RABBITMQ_PID_FILE="+filepath.Join(n.dir, "pid"),
		// The script execs the VM in place (so Pdeathsig reaches it) only
		// when input is allowed; -noinput then keeps the shell off.
		// -code_path_cache (OTP 25; later releases cache by default and
		// take it as a plain argument) spares a boot a lookup in every
		// code folder for each of the thousands of modules it loads: a
		// restart on RabbitMQ 3.10.8 went from about 4.2 s to 3.5 s.
		"RABBITMQ_ALLOW_INPUT=1",
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-noinput -code_path_cache",
	)
	if s.scripts != "" {
		n.env = append(n.env, "RABBITMQ_SCRIPTS_DIR="+s.scripts)
	}
	return nil
}

// baseEnv is the environment of every process of a set: its own HOME (the
// cookie), its own epmd, and the marker.
func baseEnv(dir string, epmdPort int) []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if k == "HOME" || k == "ERL_EPMD_PORT" || strings.HasPrefix(k, "RABBITMQ_") || k == markerEnv {
			continue
		}
		env = append(env, e)
	}
	return append(env, "HOME="+dir, "ERL_EPMD_PORT="+strconv.Itoa(epmdPort), markerEnv+"="+dir)
}

func (s *Set) startEpmd(port int) error {
	bin, err := exec.LookPath("epmd")
	if err != nil {
		// Debian keeps it inside the Erlang runtime.
		m, _ := filepath.Glob("/usr/lib/erlang/erts-*/bin/epmd")
		if len(m) == 0 {
			return fmt.Errorf("lab-owned broker: no epmd (Erlang's port mapper) on PATH or under /usr/lib/erlang")
		}
		bin = m[len(m)-1]
	}
	cmd := exec.Command(bin, "-port", strconv.Itoa(port), "-address", "127.0.0.1")
	cmd.Env = baseEnv(s.Dir, port)
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("lab-owned broker: start epmd: %w", err)
	}
	s.epmd, s.epmdDone = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.epmdDone) }()
	return nil
}

// spawn starts n's VM on its folder (a restart reuses what is on disk).
func (s *Set) spawn(n *Node) error {
	out, err := os.OpenFile(filepath.Join(n.dir, "out.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("lab-owned broker: %w", err)
	}
	cmd := exec.Command(s.server)
	cmd.Env = n.env
	cmd.Dir = n.dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("lab-owned broker: start node %s with %s: %w", n.Name, s.server, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	s.mu.Lock()
	n.cmd, n.done, n.state = cmd, done, Running
	s.mu.Unlock()
	return nil
}

// bootLimit is how long a node may take to accept connections: a cold boot
// takes about 5 s here, a cluster of three about 12 s on 2 cores.
const bootLimit = 90 * time.Second

// await waits until n completes an AMQP handshake.
func (s *Set) await(ctx context.Context, n *Node) error {
	deadline := time.Now().Add(bootLimit)
	for {
		conn, err := amqp.DialConfig(n.URL(), amqp.Config{Dial: amqp.DefaultDial(2 * time.Second)})
		if err == nil {
			if v, ok := conn.Properties["version"].(string); ok {
				s.mu.Lock()
				s.Version = v
				s.mu.Unlock()
			}
			conn.Close()
			return nil
		}
		select {
		case <-n.done:
			return fmt.Errorf("lab-owned broker: node %s exited while booting:\n%s\n  (its files: %s)", n.Name, tail(filepath.Join(n.dir, "out.log"), 6), n.dir)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(150 * time.Millisecond):
		}
		if time.Now().After(deadline) && n.url != "" {
			return fmt.Errorf("node %s (%s) did not accept AMQP connections within %s: %v", n.Name, n.Addr(), bootLimit, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lab-owned broker: node %s did not accept AMQP connections on port %d within %s: %v (its log: %s)", n.Name, n.Port, bootLimit, err, filepath.Join(n.dir, "log"))
		}
	}
}

// Nodes are the set's nodes, in order.
func (s *Set) Nodes() []*Node { return s.nodes }

// Node returns node k (1-based).
func (s *Set) Node(k int) (*Node, error) {
	if k < 1 || k > len(s.nodes) {
		return nil, fmt.Errorf("there is no node %d: this lesson's broker has %d", k, len(s.nodes))
	}
	return s.nodes[k-1], nil
}

// StateOf is node k's state.
func (s *Set) StateOf(n *Node) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return n.state
}

// running returns node k if it is running.
func (s *Set) running(k int) (*Node, error) {
	n, err := s.Node(k)
	if err != nil {
		return nil, err
	}
	if st := s.StateOf(n); st != Running {
		return nil, fmt.Errorf("node %d is already %s", k, st)
	}
	return n, nil
}

func (s *Set) setState(n *Node, st State) {
	s.mu.Lock()
	n.state = st
	s.mu.Unlock()
}

// Kill SIGKILLs node k: the VM stops at once, nothing is flushed or handed
// over, as when a machine loses power.
func (s *Set) Kill(k int) error {
	n, err := s.running(k)
	if err != nil {
		return err
	}
	if s.ctl != nil {
		return s.controlled(context.Background(), "kill", n, Killed)
	}
	n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
	s.setState(n, Killed)
	return nil
}

// Stop shuts node k down cleanly (SIGTERM: RabbitMQ stops its listeners,
// closes connections and writes what it keeps), then waits for the VM to
// exit; SIGKILL after a minute.
func (s *Set) Stop(ctx context.Context, k int) error {
	n, err := s.running(k)
	if err != nil {
		return err
	}
	if s.ctl != nil {
		return s.controlled(ctx, "stop", n, Stopped)
	}
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(time.Minute):
		n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.done
	case <-ctx.Done():
		n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.done
	}
	s.setState(n, Stopped)
	return nil
}

// Restart starts node k again on what it has on disk and waits until it
// accepts connections (a cluster node rejoins its cluster).
func (s *Set) Restart(ctx context.Context, k int) error {
	n, err := s.Node(k)
	if err != nil {
		return err
	}
	if s.StateOf(n) == Running {
		return fmt.Errorf("node %d is running", k)
	}
	if s.ctl != nil {
		if err := s.controlled(ctx, "start", n, Running); err != nil {
			return err
		}
		return s.await(ctx, n)
	}
	if err := s.spawn(n); err != nil {
		return err
	}
	return s.await(ctx, n)
}

// Closed reports whether Close has run: the nodes are gone.
func (s *Set) Closed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close kills every node and the epmd, and removes the set's folder; nodes
// in containers are removed with their network. An attached cluster is not
// the lab's: its nodes are started again instead.
func (s *Set) Close() error {
	if s.ctl != nil {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		return s.ctl.close(s)
	}
	s.mu.Lock()
	nodes := s.nodes
	s.closed = true
	s.mu.Unlock()
	for _, n := range nodes {
		if n.cmd != nil {
			n.cmd.Process.Signal(syscall.SIGKILL)
			<-n.done
		}
	}
	if s.epmd != nil {
		s.epmd.Process.Signal(syscall.SIGKILL)
		<-s.epmdDone
	}
	kill(s.Dir)
	var err error
	if s.Dir != "" && s.lock != nil {
		entries, _ := os.ReadDir(s.Dir)
		for _, e := range entries {
			if e.Name() != "lock" {
				if e := os.RemoveAll(filepath.Join(s.Dir, e.Name())); e != nil {
					err = e
				}
			}
		}
		os.Remove(filepath.Join(s.Dir, "lock"))
		os.Remove(s.Dir)
		s.lock.Close()
		s.lock = nil
	}
	return err
}

func tail(path string, n int) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

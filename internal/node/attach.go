package node

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/containers"
	"github.com/rmlab/lab/internal/secret"
)

// Environment that names a three-node cluster the lab did not start (the
// docker-compose profile "cluster"), for the lessons that need one:
// LAB_CLUSTER is its three AMQP URLs, comma separated, node 1 first;
// LAB_CLUSTER_CONTROL the command that kills, stops and starts node N as
// `CONTROL kill|stop|start rabbitN` (default: docker compose --profile
// cluster).
const (
	ClusterEnv        = "LAB_CLUSTER"
	ClusterControlEnv = "LAB_CLUSTER_CONTROL"
	defaultControl    = "docker compose --profile cluster"
)

// Cluster reads LAB_CLUSTER and LAB_CLUSTER_CONTROL: the URLs and the
// control command, or nil URLs when none is named.
func Cluster() (urls, control []string, err error) {
	v := strings.TrimSpace(os.Getenv(ClusterEnv))
	if v == "" {
		return nil, nil, nil
	}
	for _, u := range strings.Split(v, ",") {
		u = strings.TrimSpace(u)
		secret.Note(secret.KindURL, u)
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "amqp" && p.Scheme != "amqps") || p.Port() == "" {
			return nil, nil, fmt.Errorf("%s: %q is not an AMQP URL with a port (write amqp://user:password@host:5701/)", ClusterEnv, secret.URL(u))
		}
		urls = append(urls, u)
	}
	if len(urls) != 3 {
		return nil, nil, fmt.Errorf("%s names %d URLs: a cluster lesson needs the three nodes' URLs, node 1 first", ClusterEnv, len(urls))
	}
	c := os.Getenv(ClusterControlEnv)
	if strings.TrimSpace(c) == "" {
		c = defaultControl
	}
	return urls, strings.Fields(c), nil
}

// Attach is a cluster of three nodes the lab did not start, driven by
// control: Kill runs `control kill rabbitN`, Stop `control stop rabbitN`,
// Restart `control start rabbitN` and waits until the node accepts AMQP
// connections again. Close starts the nodes the lesson left down, so the
// next lesson finds the cluster whole; it never removes anything.
func Attach(ctx context.Context, urls, control []string) (*Set, error) {
	if len(urls) != 3 || len(control) == 0 {
		return nil, fmt.Errorf("attach a cluster: want three URLs and a control command")
	}
	s := &Set{ctl: commandControl(control)}
	for i, u := range urls {
		p, _ := url.Parse(u)
		port, _ := strconv.Atoi(p.Port())
		n := &Node{N: i + 1, Name: service(i + 1), Port: port, url: u, state: Running}
		s.nodes = append(s.nodes, n)
	}
	for _, n := range s.nodes {
		if err := s.await(ctx, n); err != nil {
			return nil, fmt.Errorf("the cluster %s names: %w", ClusterEnv, err)
		}
	}
	s.Dir = "(" + strings.Join(control, " ") + ")"
	return s, nil
}

// service is node k's name in the compose file.
func service(k int) string { return "rabbit" + strconv.Itoa(k) }

// control drives nodes that are not the lab's own processes: a cluster a
// command drives (LAB_CLUSTER), or the lab's nodes as containers.
type control interface {
	// do kills, stops or starts node n.
	do(ctx context.Context, verb string, n *Node) error
	// command is what do runs, as a lesson shows it.
	command(verb string, n *Node) string
	// close is the set's end: an attached cluster's nodes are started
	// again, the lab's containers removed.
	close(s *Set) error
}

// commandControl is `CONTROL kill|stop|start rabbitN`.
type commandControl []string

func (c commandControl) do(ctx context.Context, verb string, n *Node) error {
	args := append(append([]string(nil), c[1:]...), verb, n.Name)
	out, err := exec.CommandContext(ctx, c[0], args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", c.command(verb, n), err, strings.TrimSpace(secret.Scrub(string(out))))
	}
	return nil
}

func (c commandControl) command(verb string, n *Node) string {
	return strings.Join(c, " ") + " " + verb + " " + n.Name
}

func (c commandControl) close(s *Set) error { return s.restore() }

// controlled has the set's control kill, stop or start node n, and records
// its state.
func (s *Set) controlled(ctx context.Context, verb string, n *Node, after State) error {
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := s.ctl.do(c, verb, n); err != nil {
		return err
	}
	s.setState(n, after)
	return nil
}

// restore starts what a lesson left down.
func (s *Set) restore() error {
	var first error
	for _, n := range s.nodes {
		if s.StateOf(n) == Running {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), bootLimit)
		err := s.controlled(ctx, "start", n, Running)
		if err == nil {
			err = s.await(ctx, n)
		}
		cancel()
		if err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Command is what kill, stop or start of node n runs, as a lesson shows it:
// the control command for an attached cluster, else the signal the lab
// sends its own node.
func (s *Set) Command(verb string, n *Node) string {
	if s.ctl != nil {
		return s.ctl.command(verb, n)
	}
	switch verb {
	case "kill":
		return "kill -KILL " + n.Name
	case "stop":
		return "kill -TERM " + n.Name
	}
	return "rabbitmq-server " + n.Name
}

// Started is how the set's nodes were started, as a lesson shows it.
func (s *Set) Started() string {
	if b, ok := s.ctl.(*boxes); ok {
		return fmt.Sprintf("docker run %s ×%d on network %s", containers.RabbitImage, len(s.nodes), b.network.Name)
	}
	return fmt.Sprintf("rabbitmq-server ×%d, data in %s", len(s.nodes), s.Dir)
}

// Attached reports whether the lab drives the set through a control
// command (a cluster it did not start).
func (s *Set) Attached() bool {
	_, ok := s.ctl.(commandControl)
	return ok
}

// Addr is the node's AMQP host:port.
func (n *Node) Addr() string {
	if p, err := url.Parse(n.url); err == nil && n.url != "" {
		return p.Host
	}
	return "127.0.0.1:" + strconv.Itoa(n.Port)
}

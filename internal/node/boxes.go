package node

// The lab's nodes as containers, for a machine with Docker and no RabbitMQ
// of its own (or --containers): one container of the RabbitMQ image the lab
// already uses per node, on a network of the set's own, each node's AMQP
// port published on 127.0.0.1 at a port fixed for the set's life (a
// restarted container keeps it). Kill, stop and start go to the engine;
// Close removes the containers and the network, and a lab killed with
// SIGKILL leaves them to the next lab's sweep (package containers).

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"

	"github.com/rmlab/lab/internal/containers"
	"github.com/rmlab/lab/internal/secret"
)

// boxes is the control of a set whose nodes are containers.
type boxes struct {
	engine  containers.Engine
	network *testcontainers.DockerNetwork
	mu      sync.Mutex
	ids     map[*Node]string
	all     []testcontainers.Container
	once    sync.Once
}

// StartContainers starts o.Nodes nodes (1 or 3) as containers and returns
// once each accepts AMQP connections; a cluster forms as they boot, each
// naming the others in its config, as the compose file's cluster does.
func StartContainers(ctx context.Context, o Options) (*Set, error) {
	if o.Nodes != 1 && o.Nodes != 3 {
		return nil, fmt.Errorf("lab-owned broker: %d nodes asked; the lab starts 1 or 3", o.Nodes)
	}
	engine, ok := containers.FromEnv()
	if !ok || !engine.Answers(ctx) {
		return nil, fmt.Errorf("lab-owned broker in containers: no Docker engine answers at %s (start Docker, or set DOCKER_HOST)", engine.Socket)
	}
	containers.NoReaper()
	// A port chosen free can be taken before the engine binds it: try
	// again with others.
	for attempt := 1; ; attempt++ {
		s, err := startBoxes(ctx, o, engine)
		if err == nil || attempt == 3 || ctx.Err() != nil || !strings.Contains(err.Error(), "address already in use") {
			return s, err
		}
	}
}

func startBoxes(ctx context.Context, o Options, engine containers.Engine) (*Set, error) {
	set := setName(o.Namespace)
	suffix := strings.ToLower(rand.Text()[:6])
	// A network named as its containers are (tcnetwork.New names it by a
	// UUID), labelled for the sweep.
	labels := testcontainers.GenericLabels()
	maps.Copy(labels, containers.Owner("rabbitmq-nodes"))
	//nolint:staticcheck // GenericNetwork is the one call that takes a name
	made, err := testcontainers.GenericNetwork(ctx, testcontainers.GenericNetworkRequest{NetworkRequest: testcontainers.NetworkRequest{
		Name: fmt.Sprintf("rmlab-%s-nodes-%s", set, suffix), Driver: "bridge", Labels: labels}})
	if err != nil {
		return nil, fmt.Errorf("lab-owned broker in containers: create a network for the nodes: %w", err)
	}
	nw := made.(*testcontainers.DockerNetwork)
	b := &boxes{engine: engine, network: nw, ids: map[*Node]string{}}
	s := &Set{ctl: b, Dir: "containers of " + containers.RabbitImage + " on network " + nw.Name}
	ok := false
	defer func() {
		if !ok {
			b.close(s)
		}
	}()
	ports, err := FreePorts(o.Nodes)
	if err != nil {
		return nil, err
	}
	// guest from outside the container (the published port), with a
	// password of the set's own: guest/guest is everyone's.
	pw := rand.Text()
	conf := "loopback_users.guest = false\ndefault_pass = " + pw + "\n"
	if o.Nodes > 1 {
		conf += "cluster_formation.peer_discovery_backend = classic_config\n"
		for i := range o.Nodes {
			conf += fmt.Sprintf("cluster_formation.classic_config.nodes.%d = rabbit@%s\n", i+1, host(i+1))
		}
	}
	cookie := strings.ToUpper(rand.Text())
	for i := range o.Nodes {
		n := &Node{N: i + 1, Name: fmt.Sprintf("rmlab-%s-rabbit%d-%s", set, i+1, suffix), Port: ports[i],
			url: fmt.Sprintf("amqp://guest:%s@127.0.0.1:%d/", pw, ports[i]), state: Running}
		secret.Note(secret.KindURL, n.url)
		c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
			ContainerRequest: testcontainers.ContainerRequest{
				Image:          containers.RabbitImage,
				Name:           n.Name,
				Labels:         containers.Owner("rabbitmq-node"),
				ExposedPorts:   []string{"5672/tcp"},
				Networks:       []string{nw.Name},
				NetworkAliases: map[string][]string{nw.Name: {host(i + 1)}},
				ConfigModifier: func(c *container.Config) { c.Hostname = host(i + 1) },
				HostConfigModifier: func(hc *container.HostConfig) {
					hc.PortBindings = network.PortMap{network.MustParsePort("5672/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(n.Port)}}}
				},
				Files: []testcontainers.ContainerFile{
					{Reader: strings.NewReader(conf), ContainerFilePath: "/etc/rabbitmq/conf.d/20-lab.conf", FileMode: 0o644},
					// The image's entrypoint gives it to the rabbitmq user.
					{Reader: strings.NewReader(cookie), ContainerFilePath: "/var/lib/rabbitmq/.erlang.cookie", FileMode: 0o400},
				},
			},
			Started: true,
		})
		if c != nil {
			b.all = append(b.all, c)
		}
		if err != nil {
			return nil, fmt.Errorf("lab-owned broker in containers: start node %d (%s): %w", i+1, containers.RabbitImage, err)
		}
		b.ids[n] = c.GetContainerID()
		s.nodes = append(s.nodes, n)
	}
	errs := make(chan error, len(s.nodes))
	for _, n := range s.nodes {
		go func() { errs <- b.awaitBox(ctx, s, n) }()
	}
	var all []error
	for range s.nodes {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// host is node k's hostname on the set's network: its Erlang node is
// rabbit@rabbitK, as in the compose file's cluster.
func host(k int) string { return "rabbit" + strconv.Itoa(k) }

// awaitBox waits for n's AMQP handshake, with the container's last log
// lines when it does not come.
func (b *boxes) awaitBox(ctx context.Context, s *Set, n *Node) error {
	err := s.await(ctx, n)
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w\n%s", err, b.logTail(n))
}

func (b *boxes) logTail(n *Node) string {
	for _, c := range b.all {
		if c.GetContainerID() != b.id(n) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		r, err := c.Logs(ctx)
		if err != nil {
			return ""
		}
		defer r.Close()
		out, _ := io.ReadAll(io.LimitReader(r, 1<<20))
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) > 6 {
			lines = lines[len(lines)-6:]
		}
		return "  its log ends:\n  " + strings.Join(lines, "\n  ")
	}
	return ""
}

func (b *boxes) id(n *Node) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ids[n]
}

func (b *boxes) do(ctx context.Context, verb string, n *Node) error {
	id := b.id(n)
	switch verb {
	case "kill":
		return b.engine.Kill(ctx, id)
	case "stop":
		return b.engine.Stop(ctx, id, time.Minute)
	case "start":
		return b.engine.Start(ctx, id)
	}
	return fmt.Errorf("lab-owned broker in containers: no %q for a node", verb)
}

func (b *boxes) command(verb string, n *Node) string { return "docker " + verb + " " + n.Name }

// close removes the containers, then their network; once.
func (b *boxes) close(*Set) error {
	var err error
	b.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var errs []error
		for _, c := range b.all {
			errs = append(errs, b.engine.Remove(ctx, c.GetContainerID()))
		}
		if b.network != nil {
			errs = append(errs, b.engine.RemoveNetwork(ctx, b.network.ID))
		}
		err = errors.Join(errs...)
	})
	return err
}

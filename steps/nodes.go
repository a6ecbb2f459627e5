package steps

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/node"
	"github.com/rmlab/lab/internal/secret"
)

// nodesKind starts and breaks RabbitMQ nodes the lab owns (package node):
//
//	```nodes start=1```   one node of the lab's own, fresh; or start=3, a cluster
//	```nodes kill=2```    SIGKILL node 2
//	```nodes stop=1```    shut node 1 down cleanly
//	```nodes restart=2``` start node 2 again on its data
//
// From `start` on, the run's AMQP steps (declare, publish, consume, queues,
// the proxy's upstream, the ledger's broker: counts) talk to the lab's
// nodes instead of the configured broker: to the first node running, as a
// client given every node's address fails over. Where the lab cannot own
// nodes, start is skipped and says why, the lesson goes on against the
// configured broker, and the later nodes steps are skipped too.
type nodesKind struct{}

var nodeActions = []string{"start", "kill", "stop", "restart"}

func nodeAction(s *lab.Step) (string, string) {
	for _, a := range nodeActions {
		if v, ok := s.Attrs[a]; ok {
			return a, v
		}
	}
	return "", ""
}

func (nodesKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, nodeActions...); err != nil {
		return err
	}
	n := 0
	for _, a := range nodeActions {
		if _, ok := s.Attrs[a]; ok {
			n++
		}
	}
	act, v := nodeAction(s)
	if n != 1 {
		return fmt.Errorf("%s: nodes step takes one of start=1|3, kill=N, stop=N, restart=N (N may list nodes: restart=1,2)", s.Where())
	}
	if strings.Contains(v, "${") {
		return nil // a choice's option, checked when it runs
	}
	ks, err := nodeNumbers(act, v)
	if err != nil {
		return fmt.Errorf("%s: %v", s.Where(), err)
	}
	if act == "start" && ks[0] != 1 && ks[0] != 3 {
		return fmt.Errorf("%s: nodes start=%d: the lab starts 1 node or a cluster of 3", s.Where(), ks[0])
	}
	return nil
}

// nodeNumbers reads N or N,M,… (kill, stop and restart act on every node
// listed at once: two nodes restarted side by side boot in about the time
// of one).
func nodeNumbers(act, v string) ([]int, error) {
	parts := SplitList(v)
	if act == "start" && len(parts) != 1 {
		return nil, fmt.Errorf("nodes start=%q: write 1 or 3", v)
	}
	var ks []int
	seen := map[int]bool{}
	for _, p := range parts {
		k, err := strconv.Atoi(p)
		switch {
		case err != nil:
			return nil, fmt.Errorf("nodes %s=%q: write a node number, or numbers joined by commas", act, v)
		case act != "start" && (k < 1 || k > 3):
			return nil, fmt.Errorf("nodes %s=%d: nodes are numbered 1 to 3", act, k)
		case seen[k]:
			return nil, fmt.Errorf("nodes %s=%q: node %d twice", act, v, k)
		}
		seen[k] = true
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("nodes %s=: write a node number", act)
	}
	return ks, nil
}

// nodesOf is the run's lab-owned nodes, nil before a start step.
func nodesOf(r *Run) *node.Set {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.nodes
}

// brokerURL is where the run's AMQP steps go: the first running lab-owned
// node once a lesson started some, else the configured broker.
func (r *Run) brokerURL() string {
	if s := nodesOf(r); s != nil {
		for _, n := range s.Nodes() {
			if s.StateOf(n) == node.Running {
				return n.URL()
			}
		}
		return s.Nodes()[0].URL() // all down: connections fail, as they would
	}
	return r.Env.Svc.Config.AMQP
}

func (nodesKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	act, v := nodeAction(s)
	ks, err := nodeNumbers(act, r.Expand(v))
	if err != nil {
		return fail("%v", err)
	}
	set := nodesOf(r)
	if act == "start" {
		return startNodes(ctx, r, ks[0])
	}
	if set == nil {
		why := "this run has no lab-owned nodes"
		if !r.Env.Svc.Info.OwnBroker {
			why = "the lab cannot start RabbitMQ nodes of its own here: " + r.Env.Svc.Info.OwnBrokerNote
		}
		return lab.Result{Passed: true, Skipped: true, Why: why}
	}
	var nodes []*node.Node
	for _, k := range ks {
		n, err := set.Node(k)
		if err != nil {
			return fail("%v", err)
		}
		nodes = append(nodes, n)
	}
	st := amqpOf(r)
	start := time.Now()
	sent := make([]string, len(ks))
	errs := make([]error, len(ks))
	var wg sync.WaitGroup
	for i, k := range ks {
		n := nodes[i]
		switch act {
		case "kill":
			sent[i] = sayNodeKill.F(set.Command("kill", n), k)
		case "stop":
			sent[i] = sayNodeStop.F(set.Command("stop", n), k)
		case "restart":
			sent[i] = sayNodeStart.F(set.Command("start", n), k)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch act {
			case "kill":
				errs[i] = set.Kill(k)
			case "stop":
				errs[i] = set.Stop(ctx, k)
			case "restart":
				errs[i] = set.Restart(ctx, k)
			}
		}()
	}
	wg.Wait()
	// Connections to a node that went away are dead and those elsewhere may
	// point at the wrong node now: later steps dial afresh.
	st.switchBroker(r.brokerURL())
	if err := errors.Join(errs...); err != nil {
		return lab.Result{Sent: sent, Why: err.Error()}
	}
	var what []string
	for i, k := range ks {
		what = append(what, fmt.Sprintf("node %d %s", k, set.StateOf(nodes[i])))
	}
	obs := fmt.Sprintf("%s in %s\n%s", strings.Join(what, ", "), durText(time.Since(start)), nodesTable(r, set))
	return lab.Result{Passed: true, Sent: sent, Observed: obs}
}

func startNodes(ctx context.Context, r *Run, k int) lab.Result {
	if k == 3 {
		urls, control, err := node.Cluster()
		if err != nil {
			return fail("%v", err)
		}
		if urls != nil {
			return attachCluster(ctx, r, urls, control)
		}
	}
	if !r.Env.Svc.Info.OwnBroker {
		// Not a skip: the lesson goes on against the shared broker, and
		// what it can check there it checks. (A later step that needs the
		// nodes skips, and that makes the lesson SKIPPED.)
		return lab.Result{Passed: true,
			Observed: sayNoOwnNodes.F(r.Env.Svc.Info.OwnBrokerNote, secret.URL(r.Env.Svc.Config.AMQP))}
	}
	set, took, from, err := useNodes(ctx, r, k, func(c context.Context) (*node.Set, error) {
		return node.Start(c, r.Env.Svc.NodeOptions(k))
	})
	if err != nil {
		return fail("%v", err)
	}
	what := sayNodeOfOwn.F()
	if k > 1 {
		what = sayClusterOfOwn.F(k)
	}
	sent := fmt.Sprintf("%s (RabbitMQ %s)", set.Started(), set.Version)
	obs := sayNodesStartedLine.F(what, durText(took)) + "\n" + nodesTable(r, set)
	obs = from.note + obs
	if from.warmed {
		obs = sayNodesBootedLine.F(what, durText(from.booted), durText(took)) + "\n" + nodesTable(r, set)
	}
	if from.reused {
		sent = sayNodesLeft.F(set.Version, set.Started())
		obs = sayNodesReusedLine.F(what, durText(took)) + "\n" + nodesTable(r, set)
	}
	return lab.Result{Passed: true, Sent: []string{sent}, Observed: obs}
}

// attachCluster uses the cluster LAB_CLUSTER names (docker compose
// --profile cluster) as the lesson's three nodes.
func attachCluster(ctx context.Context, r *Run, urls, control []string) lab.Result {
	set, took, _, err := useNodes(ctx, r, 3, func(c context.Context) (*node.Set, error) { return node.Attach(c, urls, control) })
	if err != nil {
		return fail("%v", err)
	}
	sent := fmt.Sprintf("%s=%s (RabbitMQ %s)", node.ClusterEnv, strings.Join(secretURLs(urls), ","), set.Version)
	obs := sayNodesAnsweredLine.F(node.ClusterEnv, strings.Join(control, " "), durText(took)) + "\n" + nodesTable(r, set)
	return lab.Result{Passed: true, Sent: []string{sent}, Observed: obs}
}

// useNodes closes the run's earlier nodes, opens a set (within 3 minutes),
// or takes the one the run's shelf kept from an earlier run, and makes it
// the run's broker: every later AMQP step dials its first running node, and
// the set closes (or goes back on the shelf) with the run.
func useNodes(ctx context.Context, r *Run, k int, open func(context.Context) (*node.Set, error)) (set *node.Set, took time.Duration, from nodesFrom, err error) {
	if old := nodesOf(r); old != nil {
		old.Close()
	}
	start := time.Now()
	c, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	shelf := r.Env.Nodes
	from.booted, from.warmed = shelf.wait(c)
	set, why := shelf.take(c, k)
	from.reused = set != nil && !from.warmed
	from.warmed = set != nil && from.warmed
	if why != nil {
		from.note = sayNodesNotReused.F(why.Error()) + "\n"
	}
	if set == nil {
		if set, err = open(c); err != nil {
			return nil, 0, from, err
		}
	}
	r.mu.Lock()
	r.st.nodes = set
	r.mu.Unlock()
	r.onClose(func() {
		if shelf != nil && !set.Closed() {
			shelf.put(set)
			return
		}
		set.Close()
	})
	amqpOf(r).switchBroker(r.brokerURL())
	return set, time.Since(start), from, nil
}

// nodesFrom says where a run's nodes came from.
type nodesFrom struct {
	reused bool          // the previous option's, on the shelf
	warmed bool          // booted since the lesson began (NodeShelf.prepare)
	booted time.Duration // how long that boot took
	note   string
}

func secretURLs(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = secret.URL(u)
	}
	return out
}

func nodesTable(r *Run, set *node.Set) string {
	var rows [][]string
	for _, n := range set.Nodes() {
		rows = append(rows, []string{strconv.Itoa(n.N), n.Name, n.Addr(), string(set.StateOf(n))})
	}
	return Table([]string{"node", "name", "amqp", "state"}, rows)
}

// switchBroker drops the run's connections and points its queue reader
// at url (no management API there: unacked counts come from the lab's own
// channels).
func (st *amqpState) switchBroker(url string) {
	st.close()
	rd := st.r.nodesReader(url)
	st.mu.Lock()
	st.reader = rd
	st.mu.Unlock()
}

// nodesReader reads queues through url, and streams through the other
// running nodes where url's has no running replica.
func (r *Run) nodesReader(url string) *broker.Reader {
	return r.nodesReaderOn(url, broker.NewClient)
}

// nodesReaderOn is nodesReader with its clients from client.
func (r *Run) nodesReaderOn(url string, client func(string) *broker.Client) *broker.Reader {
	rd := &broker.Reader{Client: client(url), Names: r.Env.Svc.Names}
	if r.shortWaits() {
		// RabbitMQ 4.x holds a read of a queue whose node is down for about
		// a minute; a healthy node answers in milliseconds. Replay's short
		// waits take "no answer within 1.5 s" for unavailable, as the
		// screen takes 5 s.
		rd.Limit = replayAnswerLimit
	}
	if set := nodesOf(r); set != nil {
		for _, n := range set.Nodes() {
			if set.StateOf(n) == node.Running && n.URL() != url {
				rd.Others = append(rd.Others, client(n.URL()))
			}
		}
	}
	return rd
}

// replayAnswerLimit is how long replay waits for a queue's state.
const replayAnswerLimit = 1500 * time.Millisecond

// Queues reads queue state where the run's AMQP steps go, for the screen's
// queue panel: nil until the run starts nodes of its own (then Env.Queues,
// the configured broker, would show the wrong broker).
func (r *Run) Queues() func(ctx context.Context, names []string) ([]lab.QueueStat, error) {
	if nodesOf(r) == nil {
		return nil
	}
	url := r.brokerURL()
	return func(ctx context.Context, queues []string) ([]lab.QueueStat, error) {
		return r.nodesReaderOn(url, r.panelClient).Read(ctx, queues)
	}
}

// panelClient is the queue panel's client for url, kept until the run
// closes (Run.Close closes them).
func (r *Run) panelClient(url string) *broker.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.panel == nil {
		r.panel = map[string]*broker.Client{}
	}
	c := r.panel[url]
	if c == nil {
		c = broker.NewClient(url)
		r.panel[url] = c
	}
	return c
}

package steps

import (
	"context"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/node"
)

// NodeShelf keeps a run's lab-owned nodes when the run ends, for the next
// run in the same namespace: the second option of a choice starts from the
// cluster the first left (its nodes started again, what the first run
// declared on it deleted) instead of booting a new one, which is most of
// a cluster lesson's time. Replay gives each lesson one; nil keeps nothing.
// It holds one set at most: the nodes of a namespace share one folder.
type NodeShelf struct {
	mu       sync.Mutex
	set      *node.Set
	declared map[*node.Set][]declared
	lesson   string        // whose nodes the shelf holds or boots
	warming  chan struct{} // closed when the boot prepare began has ended
	cancel   context.CancelFunc
	booted   time.Duration // how long that boot took
}

type declared struct{ kind, name, queueType string }

// Close stops the nodes on the shelf, and a boot under way.
func (sh *NodeShelf) Close() {
	if sh == nil {
		return
	}
	sh.mu.Lock()
	if sh.cancel != nil {
		sh.cancel()
	}
	w := sh.warming
	sh.mu.Unlock()
	if w != nil {
		<-w
	}
	sh.mu.Lock()
	set := sh.set
	sh.set, sh.declared, sh.lesson, sh.warming, sh.cancel = nil, nil, "", nil, nil
	sh.mu.Unlock()
	if set != nil {
		set.Close()
	}
}

// prepare is called as a run of l begins. The shelf lets go of another
// lesson's nodes, and, when l starts nodes of the lab's own and none are
// on the shelf, begins booting them now, in the background: the learner
// reads the lesson's first paragraphs (replay runs its reset) while they
// boot, and the `nodes start` step takes them when it comes. It never
// blocks: the screen calls it from its update loop.
func (sh *NodeShelf) prepare(env *Env, l *lab.Lesson) {
	if sh == nil || env == nil || env.Svc == nil || l == nil {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var release func() // another lesson's nodes, stopped off the caller's path
	if sh.lesson != l.ID {
		set, w, cancel := sh.set, sh.warming, sh.cancel
		sh.set, sh.declared, sh.warming, sh.cancel = nil, nil, nil, nil
		release = func() {
			if cancel != nil {
				cancel()
			}
			if w != nil {
				<-w
			}
			if set != nil {
				set.Close()
			}
		}
	}
	sh.lesson = l.ID
	k := firstStart(l)
	cluster, _, _ := node.Cluster()
	if k == 0 || !env.Svc.Info.OwnBroker || (cluster != nil && k == 3) || sh.set != nil || sh.warming != nil {
		if release != nil {
			go release()
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	done := make(chan struct{})
	sh.warming, sh.cancel = done, cancel
	go func() {
		defer close(done)
		defer cancel()
		if release != nil {
			release() // the namespace's node folder is free again after it
		}
		start := time.Now()
		set, err := node.Start(ctx, env.Svc.NodeOptions(k))
		if err != nil {
			return // the step boots them itself and says why it failed
		}
		sh.mu.Lock()
		wanted := sh.warming == done && sh.set == nil
		if wanted {
			sh.set, sh.booted = set, time.Since(start)
		}
		sh.mu.Unlock()
		if !wanted {
			set.Close() // let go of meanwhile (Close, another lesson, a set put back)
		}
	}()
}

// firstStart is N of l's first `nodes start=N` step, 0 for none (or a
// choice's ${…}, known only on its path).
func firstStart(l *lab.Lesson) int {
	for _, s := range l.Steps() {
		if s.Kind == "nodes" {
			switch s.Attrs["start"] {
			case "1":
				return 1
			case "3":
				return 3
			}
			return 0
		}
	}
	return 0
}

// wait waits for a boot prepare began; it reports how long the boot took
// when the set on the shelf came from it.
func (sh *NodeShelf) wait(ctx context.Context) (time.Duration, bool) {
	if sh == nil {
		return 0, false
	}
	sh.mu.Lock()
	w := sh.warming
	sh.mu.Unlock()
	if w == nil {
		return 0, false
	}
	select {
	case <-w:
	case <-ctx.Done():
		return 0, false
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.warming == w {
		sh.warming, sh.cancel = nil, nil
	}
	return sh.booted, sh.set != nil
}

// note records a queue or exchange declared on set (real name), to delete
// before the set serves another run.
func (sh *NodeShelf) note(set *node.Set, kind, name, queueType string) {
	if sh == nil || set == nil {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.declared == nil {
		sh.declared = map[*node.Set][]declared{}
	}
	sh.declared[set] = append(sh.declared[set], declared{kind, name, queueType})
}

// put shelves set, stopping whatever was there.
func (sh *NodeShelf) put(set *node.Set) {
	sh.mu.Lock()
	old := sh.set
	sh.set = set
	sh.mu.Unlock()
	if old != nil && old != set {
		old.Close()
	}
}

// take (after wait, which lets a boot prepare began finish) returns the
// shelved set if it has k nodes, every node running again
// and the earlier runs' queues and exchanges gone; otherwise it stops the
// shelved set (it holds the namespace's folder) and returns nil, with why
// when a set was there.
func (sh *NodeShelf) take(ctx context.Context, k int) (*node.Set, error) {
	if sh == nil {
		return nil, nil
	}
	sh.mu.Lock()
	set := sh.set
	decl := sh.declared[set]
	sh.set = nil
	delete(sh.declared, set)
	sh.mu.Unlock()
	if set == nil {
		return nil, nil
	}
	if len(set.Nodes()) != k {
		set.Close()
		return nil, nil
	}
	if err := refresh(ctx, set, decl); err != nil {
		set.Close()
		return nil, err
	}
	return set, nil
}

// refresh starts the set's stopped nodes side by side and deletes what
// earlier runs declared (with the lab's marks), except quorum queues, which
// it empties: RabbitMQ 3.x names a quorum queue's Raft group after the
// queue alone, and a group deleted and declared again at once can come back
// with a member missing (measured on 3.10.8: after the next kill the queue
// had no majority left and answered nothing for 30 s).
func refresh(ctx context.Context, set *node.Set, decl []declared) error {
	var wg sync.WaitGroup
	errs := make([]error, len(set.Nodes()))
	for i, n := range set.Nodes() {
		if set.StateOf(n) == node.Running {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = set.Restart(ctx, n.N)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	c := broker.NewClient(set.Nodes()[0].URL())
	defer c.Close()
	for i := len(decl) - 1; i >= 0; i-- {
		d := decl[i]
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		var err error
		if d.kind == "queue" && d.queueType == broker.Quorum {
			pctx, pcancel := context.WithTimeout(dctx, 5*time.Second)
			err = retry(pctx, func() error {
				return c.Probe(pctx, func(ch *amqp.Channel) error {
					_, err := ch.QueuePurge(d.name, false)
					return err
				})
			})
			pcancel()
		}
		if d.kind != "queue" || d.queueType != broker.Quorum || err != nil {
			// A quorum queue that will not purge (a lone member that has not
			// come back) is deleted: with one member there is no group to
			// come back short of one.
			err = retry(dctx, func() error {
				_, err := c.Remove(dctx, d.kind, d.name)
				return err
			})
		}
		cancel()
		if err != nil {
			return fmt.Errorf("%s %s: %w", d.kind, d.name, err)
		}
	}
	return nil
}

// retry runs f until it succeeds or ctx ends: a quorum queue on a node
// just started answers once its Raft member has recovered, a second or two
// after the node accepts connections.
func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || broker.IsNotFound(err) {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

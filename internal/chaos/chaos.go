// Package chaos runs the whole pipeline — orders through the outbox,
// relays, the broker, consumers — under a fault schedule drawn from a seed,
// then checks what happened to every order, in the style of Jepsen and
// Maelstrom: a generator (Schedule), a recorded history (History) and a
// checker (Check) that reads the final state of MySQL and the broker.
//
// The processes are the lessons' own worker programs (producer --place,
// relay, consumer), started and killed the way lessons start and kill them;
// the faults use the lab's mechanisms (SIGKILL at a named point, the AMQP
// proxy, a lab-owned broker node, KILL CONNECTION).
package chaos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/worker"
)

// FaultKind is one kind of fault the scheduler injects.
type FaultKind string

const (
	KillRelay     FaultKind = "kill-relay"     // SIGKILL of a relay, at a named point or at a random moment
	KillConsumer  FaultKind = "kill-consumer"  // SIGKILL of a consumer, likewise
	KillProducer  FaultKind = "kill-producer"  // SIGKILL of the producer, likewise
	DropConfirm   FaultKind = "drop-confirm"   // the proxy swallows the next publisher confirm
	CutAMQP       FaultKind = "cut-amqp"       // the proxy cuts a relay's or a consumer's connection after its next frame of a kind
	PauseRelay    FaultKind = "pause-relay"    // a relay holds its claim past its lease, then goes on
	RestartBroker FaultKind = "restart-broker" // SIGKILL of the lab-owned broker node, then a start on its data
	CutMySQL      FaultKind = "cut-mysql"      // KILL CONNECTION of one of the workers' MySQL sessions
)

// FaultKinds are every kind, in the order --faults lists them.
var FaultKinds = []FaultKind{KillRelay, KillConsumer, KillProducer, DropConfirm, CutAMQP, PauseRelay, RestartBroker, CutMySQL}

// AllKinds are FaultKinds and the kinds only a run with an SMS provider
// takes, for what lists a run's faults.
func AllKinds() []FaultKind { return append(slices.Clone(FaultKinds), SMSTimeout, SMSError) }

// ParseFaults reads --faults: "all", or kinds separated by commas.
func ParseFaults(s string) ([]FaultKind, error) {
	if s == "" || s == "all" {
		return slices.Clone(FaultKinds), nil
	}
	var out []FaultKind
	for _, f := range strings.Split(s, ",") {
		k := FaultKind(strings.TrimSpace(f))
		if !slices.Contains(FaultKinds, k) && k != SMSTimeout && k != SMSError {
			return nil, fmt.Errorf("--faults: %q is not a fault kind; use all, or some of %s", f, kindList())
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

func kindList() string {
	var s []string
	for _, k := range FaultKinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ", ")
}

// Fault is one planned fault: what, on whom, where and when (from the
// start of the schedule). A schedule is a pure function of the seed and the
// options, so two runs with one seed plan the same faults.
type Fault struct {
	At     time.Duration `json:"-"`
	AtMS   int64         `json:"at_ms"`
	Kind   FaultKind     `json:"kind"`
	Target string        `json:"target"`          // relay-2, consumer-1, producer, broker, outbox or idempotency (cut-mysql)
	Point  string        `json:"point,omitempty"` // kill or pause there; "" is a random moment
	// Must: a fault a program of its own in this role cannot survive
	// unless it is right, which every seed plays; the verdict is no pass
	// when it found no moment to land in.
	Must bool `json:"must,omitempty"`
}

func (f Fault) String() string {
	s := fmt.Sprintf("%6.2fs  %-14s %s", f.At.Seconds(), f.Kind, f.Target)
	if f.Point != "" {
		s += " at " + f.Point
	} else if f.Kind == KillRelay || f.Kind == KillConsumer || f.Kind == KillProducer || f.Kind == PauseRelay {
		s += " at a random moment"
	}
	return s
}

// Pipeline is the code under test: the relay's and the consumer's flags.
// Safe is the article's pipeline; the others are the lessons' unsafe
// variants, each breaking one invariant.
type Pipeline struct {
	Name     string
	Relay    []string // extra relay flags
	Consumer []string // consumer flags
	Breaks   string   // the invariant it breaks: "lost" or "twice" ("" for safe)
	About    string
}

// Pipelines are the pipelines --pipeline can pick.
var Pipelines = []Pipeline{
	{Name: "safe", Consumer: []string{"--strategy", "one-tx"},
		About: "per-claim lease tokens, mark after the confirm, one message id per event; the consumer's mark and effect in one transaction, acked after the commit"},
	{Name: "mark-before-publish", Relay: []string{"--mark-before-publish"}, Consumer: []string{"--strategy", "one-tx"}, Breaks: "lost",
		About: "the relay marks SENT, then publishes: a crash in between loses the event (at most once)"},
	{Name: "ack-before-commit", Consumer: []string{"--strategy", "one-tx", "--ack", "before-commit"}, Breaks: "lost",
		About: "the consumer acks before its commit: a crash in between loses the message"},
	{Name: "fresh-message-id", Relay: []string{"--fresh-message-id"}, Consumer: []string{"--strategy", "message-id"}, Breaks: "twice",
		About: "a new message id on every attempt, and a consumer keyed by message id: a republished event looks new"},
	{Name: "no-idempotency", Consumer: []string{"--strategy", "none"}, Breaks: "twice",
		About: "the consumer applies every delivery: a redelivery applies twice"},
}

// PipelineNamed finds a pipeline.
func PipelineNamed(name string) (Pipeline, error) {
	var names []string
	for _, p := range Pipelines {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Pipeline{}, fmt.Errorf("--pipeline %s: no such pipeline; use one of %s", name, strings.Join(names, ", "))
}

// Options are one run's settings.
type Options struct {
	Seed      uint64
	Orders    int
	Duration  time.Duration // how long the schedule runs; the orders are placed across it
	Relays    int
	Consumers int
	Faults    []FaultKind
	Every     time.Duration // mean time between faults
	Pipeline  Pipeline
	Quiet     time.Duration // at most this long for everything to drain after the schedule
	Lease     int           // the relays' lease seconds
	Namespace string        // where its databases and queue live
	Binary    string        // the lab (or lab-worker) binary that runs the workers

	// Own, when set, is a program of someone else's (a learner's challenge,
	// a team's consumer) that takes the place of the lab's consumers or
	// relays; Consumers or Relays copies of it run.
	Own *Own
	// SharedServer keeps a run with Own on the configured MySQL server
	// instead of one of the lab's own made for it: its verdict is then
	// unproven (Summary.Unproven), never passed.
	SharedServer bool
	// Resend re-sends every Nth order's event under a new event id (an
	// upstream retry: the business key and the amount are the same);
	// Conflict sends every Nth order's event again under a new id with
	// another amount (ConflictAmount), which must be recorded, not applied.
	Resend, Conflict int
	// SMS runs an SMS provider of the run's own (LAB_SMS_URL) and makes the
	// effect an SMS per order: the checker counts the SMS each order's user
	// was sent, not points.
	SMS bool
	// Order places each order as CREATED then PAID, two events with
	// versions, and makes the effect each order's newest state in
	// order_view: the checker wants every order PAID at version 2.
	Order bool
}

// ConflictAmount is the amount of a conflicting repeat; every order's own
// event carries 1.
const ConflictAmount = 5

// Own is a program the lab did not write, run in a role of the pipeline
// under the lab's supervisor, proxies and faults (the challenges' contract,
// challenge/CONTRACT.md). Only what reaches MySQL and the broker is
// observed, so it may be written in any language.
type Own struct {
	Role    string   // consumer or relay
	Command []string // argv; run in a process group of its own
	Dir     string   // its working directory
	Env     []string // extra environment, after the contract's
	// Remote, when set, runs the copies on another machine (a workshop
	// participant's, through the door) instead of here.
	Remote worker.Remote
}

// Defaults fills what a caller left zero.
func (o *Options) Defaults() {
	if o.Orders <= 0 {
		o.Orders = 500
	}
	if o.Duration <= 0 {
		o.Duration = 10 * time.Second
	}
	if o.Relays <= 0 {
		o.Relays = 2
	}
	if o.Consumers <= 0 {
		o.Consumers = 2
	}
	if o.Faults == nil {
		o.Faults = slices.Clone(FaultKinds)
	}
	if o.Every <= 0 {
		o.Every = time.Second
	}
	if o.Pipeline.Name == "" {
		o.Pipeline = Pipelines[0]
	}
	if o.Quiet <= 0 {
		o.Quiet = 40 * time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 2
	}
}

// Validate says what is wrong with the options, as a user reads it.
func (o Options) Validate() error {
	switch {
	case o.Orders > 100000:
		return fmt.Errorf("--orders %d: at most 100000", o.Orders)
	case o.Relays > 8 || o.Consumers > 8:
		return fmt.Errorf("--relays %d --consumers %d: at most 8 of each", o.Relays, o.Consumers)
	case o.Duration < time.Second || o.Duration > time.Hour:
		return fmt.Errorf("--duration %s: between 1s and 1h", o.Duration)
	case o.Own != nil && o.Own.Role != "consumer" && o.Own.Role != "relay":
		return fmt.Errorf("own program: role %q; it takes the place of the consumer or the relay", o.Own.Role)
	case o.Own != nil && len(o.Own.Command) == 0:
		return fmt.Errorf("own program: no command to run")
	case !o.SMS && (slices.Contains(o.Faults, SMSTimeout) || slices.Contains(o.Faults, SMSError)):
		return fmt.Errorf("--faults: sms-timeout and sms-error need an SMS provider, which only the challenges run")
	case o.Resend < 0 || o.Conflict < 0:
		return fmt.Errorf("resend and conflict are every Nth order: N ≥ 1, or 0 for none")
	case float64(o.Orders)/o.Duration.Seconds() > 2000:
		return fmt.Errorf("--orders %d in --duration %s is over 2000 orders/s; give a longer duration", o.Orders, o.Duration)
	}
	return nil
}

package challenge

import (
	"fmt"
	"io"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/chaos"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Options are one run's settings on top of the challenge's.
type Options struct {
	Seed      uint64
	Copies    int           // copies of the program; 0: the challenge's
	Duration  time.Duration // 0: the challenge's
	Command   []string      // the program: argv
	Dir       string        // its working directory
	Namespace string        // where the run's databases and queue live
	Binary    string        // the lab binary that runs the lab's own workers
	History   io.Writer     // the history as JSON lines, or nil
	Workers   *worker.Group // the processes, for the screen; nil for none
	// SharedServer: the evidence on the configured MySQL server, not on
	// one of the lab's own for the run (the verdict is then unproven).
	SharedServer bool
	// Remote runs the program's copies on another machine (a workshop
	// participant's, through the door): Command is then only its name.
	Remote worker.Remote
}

// New prepares a run of c with the learner's program in c's role: the
// chaos harness's options from the page, the program as chaos.Own. Nothing
// is started until Execute.
func New(cfg services.Config, c *lab.Challenge, o Options) (*chaos.Run, error) {
	if len(o.Command) == 0 {
		return nil, fmt.Errorf("lab challenge run %s: no program to run; give it after --, e.g. lab challenge run %s -- go run ./mine", c.Name, c.Name)
	}
	faults, err := chaos.ParseFaults(strings.Join(c.Faults, ","))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.File, err)
	}
	co := chaos.Options{
		Seed: o.Seed, Orders: c.Orders, Duration: c.Duration, Faults: faults, Every: c.Every,
		Relays: 2, Consumers: 2, Quiet: 30 * time.Second, Lease: 2,
		Namespace: o.Namespace, Binary: o.Binary, Resend: c.Resend, Conflict: c.Conflict, SMS: c.SMS, Order: c.Order,
		Own:          &chaos.Own{Role: c.Role, Command: o.Command, Dir: o.Dir, Env: []string{"LAB_CHALLENGE=" + c.Name}, Remote: o.Remote},
		SharedServer: o.SharedServer,
	}
	if o.Duration > 0 {
		// The orders keep their rate, so a longer run is more of the same.
		co.Orders = max(1, int(float64(c.Orders)*o.Duration.Seconds()/c.Duration.Seconds()))
		co.Duration = o.Duration
	}
	copies := c.Copies
	if o.Copies > 0 {
		copies = o.Copies
	}
	switch c.Role {
	case "consumer":
		co.Consumers = copies
		co.Pipeline = chaos.Pipeline{Name: "challenge " + c.Name, About: "the lab's producer and relays, your consumer"}
	case "relay":
		co.Relays = copies
		// Keyed by the message id: a relay that gives a republish a new id
		// shows as an order applied twice.
		co.Pipeline = chaos.Pipeline{Name: "challenge " + c.Name, Consumer: []string{"--strategy", "message-id"},
			About: "the lab's producer and consumers (keyed by the message id), your relay"}
	}
	return chaos.New(cfg, co, chaos.NewHistory(o.History), o.Workers)
}

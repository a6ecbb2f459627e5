// Package programs is the one list of worker programs a lesson's spawn step
// can start (relay, consumer, producer, …), with their pause points. Both
// binaries that run them use it: `lab worker KIND` and `lab-worker worker
// KIND`, the same code without the screen's packages, which starts in about
// a third of the CPU time (a workshop's forty screens reaching a spawn step
// at once start forty of them).
package programs

import (
	"sort"

	"github.com/rmlab/lab/internal/programs/batch"
	"github.com/rmlab/lab/internal/programs/binlogrelay"
	"github.com/rmlab/lab/internal/programs/consumer"
	"github.com/rmlab/lab/internal/programs/executor"
	"github.com/rmlab/lab/internal/programs/producer"
	"github.com/rmlab/lab/internal/programs/provider"
	"github.com/rmlab/lab/internal/programs/redrive"
	"github.com/rmlab/lab/internal/programs/relay"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/worker"
)

// Program is one worker program: its name in `spawn program=`, its entry
// point and the pause points it announces (declared beside its code).
type Program struct {
	Kind   string
	Main   worker.Main
	Points []string
	// Check, where the program has one, parses its flags as Main would and
	// says what is wrong with them (a flag that needs another), without
	// running anything: lab check runs it on every spawn's body.
	Check func(args []string) error
}

// All are the worker programs.
var All = []Program{
	{"consumer", consumer.Main, consumer.Points, parsed(consumer.ParseArgs)},
	{"relay", relay.Main, relay.Points, nil},
	{"producer", producer.Main, producer.Points, parsed(producer.ParseArgs)},
	{"batch-consumer", batch.Main, batch.Points, parsed(batch.ParseArgs)},
	{"executor", executor.Main, executor.Points, nil},
	{"provider", provider.Main, provider.Points, nil},
	{"redrive", redrive.Main, redrive.Points, parsed(redrive.ParseArgs)},
	{"binlog-relay", binlogrelay.Main, binlogrelay.Points, parsed(binlogrelay.ParseArgs)},
}

func parsed[O any](parse func([]string) (O, error)) func([]string) error {
	return func(args []string) error {
		_, err := parse(args)
		return err
	}
}

// Find looks a program up by its kind.
func Find(kind string) (Program, bool) {
	for _, p := range All {
		if p.Kind == kind {
			return p, true
		}
	}
	return Program{}, false
}

// Points maps each program to its pause points.
func Points() map[string][]string {
	m := make(map[string][]string, len(All))
	for _, p := range All {
		m[p.Kind] = p.Points
	}
	return m
}

// Names lists the programs, sorted.
func Names() []string {
	var out []string
	for _, p := range All {
		out = append(out, p.Kind)
	}
	sort.Strings(out)
	return out
}

// Run is the child side of a worker: `worker KIND [--name N] [--pause-at
// P,...] FLAGS...` with args after "worker".
func Run(args []string) int {
	for _, p := range All {
		worker.Register(p.Kind, p.Main, p.Points)
	}
	worker.TakeSecrets()
	services.Config{}.FromEnv() // notes the passwords it was given, so its log lines never show one
	return worker.RunChild(args)
}

// Package programs is the one list of worker programs a lesson's spawn step
// can start (relay, consumer, producer, …), with their pause points. Both
// binaries that run them use it: `lab worker KIND` and `lab-worker worker
// KIND`, the same code without the screen's packages, which starts in about
// a third of the CPU time (a workshop's forty screens reaching a spawn step
// at once start forty of them).
package programs

import (
	"sort"

	"github.com/rmlab/lab/batch"
	"github.com/rmlab/lab/consumer"
	"github.com/rmlab/lab/executor"
	"github.com/rmlab/lab/producer"
	"github.com/rmlab/lab/provider"
	"github.com/rmlab/lab/relay"
	"github.com/rmlab/lab/services"
	"github.com/rmlab/lab/worker"
)

// Program is one worker program: its name in `spawn program=`, its entry
// point and the pause points it announces (declared beside its code).
type Program struct {
	Kind   string
	Main   worker.Main
	Points []string
}

// All are the worker programs.
var All = []Program{
	{"consumer", consumer.Main, consumer.Points},
	{"relay", relay.Main, relay.Points},
	{"producer", producer.Main, producer.Points},
	{"batch-consumer", batch.Main, batch.Points},
	{"executor", executor.Main, executor.Points},
	{"provider", provider.Main, provider.Points},
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
	services.Config{}.FromEnv() // notes the passwords it was given, so its log lines never show one
	return worker.RunChild(args)
}

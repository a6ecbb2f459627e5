package main

import (
	"github.com/rmlab/lab/relay"
	"github.com/rmlab/lab/worker"
)

// The outbox part's worker process: `lab worker relay`.
func init() { worker.Register("relay", relay.Main, relay.Points) }

package main

import (
	"github.com/rmlab/lab/consumer"
	"github.com/rmlab/lab/executor"
	"github.com/rmlab/lab/provider"
	"github.com/rmlab/lab/worker"
)

// The idempotency part's worker programs.
func init() {
	worker.Register("consumer", consumer.Main, consumer.Points)
	worker.Register("executor", executor.Main, executor.Points)
	worker.Register("provider", provider.Main, provider.Points)
}

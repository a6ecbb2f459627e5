package main

import (
	"github.com/rmlab/lab/batch"
	"github.com/rmlab/lab/producer"
	"github.com/rmlab/lab/worker"
)

// The broker part's worker programs.
func init() {
	worker.Register("producer", producer.Main, producer.Points)
	worker.Register("batch-consumer", batch.Main, batch.Points)
}

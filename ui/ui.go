// Package ui is the lab's screen (Bubble Tea v2).
package ui

import (
	"context"
	"errors"

	"github.com/rmlab/lab/steps"
)

// Options start the screen.
type Options struct {
	Env        *steps.Env
	Lang       string
	LessonsDir string
	Start      string // lesson id to open first
}

// Run shows the screen until the learner quits.
func Run(ctx context.Context, opt Options) error {
	return errors.New("the screen is not built yet")
}

// Package ui is the lab's screen (Bubble Tea v2): the lesson list, the
// lesson with its steps, and live panels for the lesson's tables, broker
// queues, worker processes and outcome ledger.
//
// Layout of the package: app.go is the root model (routing, keys, layout);
// component.go the pane interface; one file per pane (list.go, lesson.go
// with prose.go for glamour, tables.go, queues.go, workers.go, ledger.go,
// panels.go for the tab/stack container, help.go); session.go runs a
// lesson's steps as commands; progress.go keeps progress.json; styles.go
// and keys.go hold every style and key; text_i18n.go every word of the
// screen's own, per language (l switches it with the lessons); text.go
// measures and fits text by display width (CJK is two cells).
package ui

import (
	"context"
	"errors"

	tea "charm.land/bubbletea/v2"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/steps"
)

// Options start the screen.
type Options struct {
	Env        *steps.Env
	Lang       string
	LessonsDir string
	Start      string // lesson id to open first
	// Progress is where progress is kept: nil is a file at progress.Path
	// ($LAB_PROGRESS_FILE or the state directory); a workshop gives a
	// participant's file or the room's database.
	Progress progress.Store
	// RunPrograms lets the challenges run the learner's own program (p
	// sets it). Only a learner's own screen does: a workshop's server runs
	// nothing a participant gives it.
	RunPrograms bool
}

// New is the screen as a model for a program the caller runs (lab serve
// runs one per SSH session). stop closes the open run, workers killed and
// sessions rolled back; call it when the program ends, whatever way.
func New(ctx context.Context, opt Options) (m tea.Model, stop func(), err error) {
	a, err := newApp(ctx, opt)
	if err != nil {
		return nil, nil, err
	}
	return a, a.shutdown, nil
}

// Run shows the screen until the learner quits. Whatever way it ends, the
// open run is closed (workers killed, sessions rolled back) before it
// returns.
func Run(ctx context.Context, opt Options) error {
	a, err := newApp(ctx, opt)
	if err != nil {
		return err
	}
	p := tea.NewProgram(a, tea.WithContext(ctx))
	_, err = p.Run()
	a.shutdown()
	if errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, tea.ErrInterrupted) {
		return nil // ctrl-c or a signal: a normal way out
	}
	return err
}

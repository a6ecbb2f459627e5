package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/steps"
)

// Component is one pane of the screen. A pane owns its state and the
// message types it reacts to (declared next to it); the App routes messages,
// sizes panes and joins their views. Update never blocks: anything that
// touches a service is returned as a tea.Cmd.
type Component interface {
	Update(msg tea.Msg) tea.Cmd
	View() string
	// SetSize gives the pane its outer size, border included.
	SetSize(w, h int)
}

// common is what every pane reads: styles, keys, the environment and the
// learner's progress. The App owns it and changes it only in Update.
type common struct {
	st       *Styles
	keys     KeyMap
	env      *steps.Env
	lang     string
	progress *progress.File
	caps     map[lab.Capability]bool // nil when unknown: nothing is flagged
	now      func() time.Time        // pinned in golden tests
}

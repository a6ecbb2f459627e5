package ui

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rmlab/lab/internal/progress"
)

// progressSavedMsg reports a save; only errors are shown.
type progressSavedMsg struct{ err error }

// progressSaver writes snapshots in order: saves run as commands (file I/O
// never happens in Update), so a slow older write must not overwrite a newer
// one.
type progressSaver struct {
	store   progress.Store
	fold    func(*progress.File) // what others keep beside the progress, folded in before each snapshot
	mu      sync.Mutex
	seq     uint64 // last snapshot taken (Update goroutine only)
	written uint64 // last snapshot on disk (under mu)
}

// save snapshots p now and writes it in the background.
func (s *progressSaver) save(p *progress.File) tea.Cmd {
	if s == nil || s.store == nil {
		return nil
	}
	if s.fold != nil {
		s.fold(p)
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return func() tea.Msg { return progressSavedMsg{err} }
	}
	s.seq++
	seq := s.seq
	return func() tea.Msg { return progressSavedMsg{s.write(seq, b)} }
}

func (s *progressSaver) write(seq uint64, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.written {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.store.Save(ctx, b); err != nil {
		return err
	}
	s.written = seq
	return nil
}

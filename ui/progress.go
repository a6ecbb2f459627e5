package ui

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// ProgressEnv overrides where progress is kept (tests point it at a temp
// file so they never touch the learner's real one).
const ProgressEnv = "LAB_PROGRESS_FILE"

// LessonProgress is how far the learner got in one lesson.
type LessonProgress struct {
	Done bool `json:"done"`
	// Step is the index of the next step to run: steps before it have run.
	Step int `json:"step"`
	// Choices are the options taken, so a resume replays the same path.
	Choices map[string]string `json:"choices,omitempty"`
	// Predictions are the learner's picks at predict steps: a resume does
	// not ask again.
	Predictions map[string]string `json:"predictions,omitempty"`
	Updated     time.Time         `json:"updated"`
}

// Progress is the whole progress file.
type Progress struct {
	Last    string                     `json:"last,omitempty"` // the lesson open at quit
	Lang    string                     `json:"lang,omitempty"`
	Lessons map[string]*LessonProgress `json:"lessons"`
}

// ProgressPath is $LAB_PROGRESS_FILE or <user config dir>/rmlab/progress.json.
func ProgressPath() (string, error) {
	if p := os.Getenv(ProgressEnv); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "rmlab", "progress.json"), nil
}

// LoadProgress reads the file; a missing file is an empty progress.
func LoadProgress(path string) (*Progress, error) {
	p := &Progress{Lessons: map[string]*LessonProgress{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, p); err != nil {
		return &Progress{Lessons: map[string]*LessonProgress{}}, err
	}
	if p.Lessons == nil {
		p.Lessons = map[string]*LessonProgress{}
	}
	return p, nil
}

// Of returns the lesson's progress, creating it.
func (p *Progress) Of(id string) *LessonProgress {
	lp := p.Lessons[id]
	if lp == nil {
		lp = &LessonProgress{}
		p.Lessons[id] = lp
	}
	return lp
}

// progressSavedMsg reports a save; only errors are shown.
type progressSavedMsg struct{ err error }

// progressSaver writes snapshots in order: saves run as commands (file I/O
// never happens in Update), so a slow older write must not overwrite a newer
// one.
type progressSaver struct {
	path    string
	mu      sync.Mutex
	seq     uint64 // last snapshot taken (Update goroutine only)
	written uint64 // last snapshot on disk (under mu)
}

// save snapshots p now and writes it in the background.
func (s *progressSaver) save(p *Progress) tea.Cmd {
	if s == nil || s.path == "" {
		return nil
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
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return err
	}
	s.written = seq
	return nil
}

// Package progress is the learner's progress store: how far they got in
// each lesson, the choices they took and the predictions they made, kept
// per namespace and lessons folder under the XDG state directory, so two
// learners on one account, or an instructor's lessons and the built-in
// ones, never share a file.
package progress

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Env overrides where progress is kept (tests point it at a temp file so
// they never touch the learner's real one).
const Env = "LAB_PROGRESS_FILE"

// Lesson is how far the learner got in one lesson.
type Lesson struct {
	Done bool `json:"done"`
	// Step is the index of the next step to run: steps before it have run.
	Step int `json:"step"`
	// Choices are the options taken, so a resume replays the same path.
	Choices map[string]string `json:"choices,omitempty"`
	// Predictions are the learner's picks at predict steps: a resume does
	// not ask again.
	Predictions map[string]string `json:"predictions,omitempty"`
	// Took is each step's wall time (ms) the last time it ran on this
	// machine at full length: what the screen says a wait usually takes.
	Took    map[int]int64 `json:"took_ms,omitempty"`
	Updated time.Time     `json:"updated"`
}

// File is a whole progress file.
type File struct {
	Last     string             `json:"last,omitempty"` // the lesson open at quit
	Lang     string             `json:"lang,omitempty"`
	Lessons  map[string]*Lesson `json:"lessons"`
	Activity Activity           `json:"activity"`
	// Challenges are the challenges' results, by name.
	Challenges map[string]*Challenge `json:"challenges,omitempty"`
}

// Challenge is how a challenge went for the learner.
type Challenge struct {
	Passed  bool      `json:"passed"`
	Seeds   []uint64  `json:"seeds_passed,omitempty"` // the seeds it passed under
	Runs    int       `json:"runs"`
	Hints   int       `json:"hints"`             // hints shown so far
	Last    string    `json:"last,omitempty"`    // the last verdict, one line
	Command []string  `json:"command,omitempty"` // the screen's: what runs the learner's program
	Dir     string    `json:"dir,omitempty"`     // and in which folder
	Updated time.Time `json:"updated"`
}

// Challenge returns the challenge's progress, creating it.
func (p *File) Challenge(name string) *Challenge {
	if p.Challenges == nil {
		p.Challenges = map[string]*Challenge{}
	}
	c := p.Challenges[name]
	if c == nil {
		c = &Challenge{}
		p.Challenges[name] = c
	}
	return c
}

// New is an empty progress.
func New() *File { return &File{Lessons: map[string]*Lesson{}} }

// Path is where progress is kept: $LAB_PROGRESS_FILE, else
// $XDG_STATE_HOME/rmlab (default ~/.local/state/rmlab)/progress[-NS][-DIR].json,
// NS the namespace and DIR a short hash of an instructor's lessons folder.
// Progress is state, not configuration.
func Path(namespace, lessonsDir string) (string, error) {
	if p := os.Getenv(Env); p != "" {
		return p, nil
	}
	dir, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "rmlab", fileName(namespace, lessonsDir)), nil
}

// fileName is progress[-NS][-DIR].json, DIR the lessons folder's name and
// a short hash of its absolute path.
func fileName(namespace, lessonsDir string) string {
	name := "progress"
	if namespace != "" {
		name += "-" + namespace
	}
	if lessonsDir != "" {
		abs, err := filepath.Abs(lessonsDir)
		if err != nil {
			abs = lessonsDir
		}
		sum := sha256.Sum256([]byte(abs))
		name += "-" + filepath.Base(abs) + "-" + hex.EncodeToString(sum[:4])
	}
	return name + ".json"
}

// StateDir is $XDG_STATE_HOME, default ~/.local/state: where the lab keeps
// state (progress, a workshop server's host key).
func StateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}

// Participant is where a workshop participant's progress is kept on the
// server: <state dir>/rmlab/workshop/progress-NAME[-DIR].json, beside
// $LAB_PROGRESS_FILE's folder when that is set (participants never share
// one file).
func Participant(name, lessonsDir string) (string, error) {
	dir, err := StateDir()
	if f := os.Getenv(Env); f != "" {
		dir, err = filepath.Dir(f), nil
	}
	if err != nil {
		return "", err
	}
	return ParticipantIn(filepath.Join(dir, "rmlab", "workshop"), name, lessonsDir), nil
}

// ParticipantIn is participant name's progress file in folder dir.
func ParticipantIn(dir, name, lessonsDir string) string {
	return filepath.Join(dir, fileName(name, lessonsDir))
}

// Load reads the file; a missing file is an empty progress. The built-in
// lessons' default file is first looked for where the lab kept it before
// (<user config dir>/rmlab/progress.json), so nobody loses their place.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && os.Getenv(Env) == "" && filepath.Base(path) == "progress.json" {
		if dir, derr := os.UserConfigDir(); derr == nil {
			b, err = os.ReadFile(filepath.Join(dir, "rmlab", "progress.json"))
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		return New(), err
	}
	p := New()
	if err := json.Unmarshal(b, p); err != nil {
		return New(), err
	}
	if p.Lessons == nil {
		p.Lessons = map[string]*Lesson{}
	}
	return p, nil
}

// Of returns the lesson's progress, creating it.
func (p *File) Of(id string) *Lesson {
	lp := p.Lessons[id]
	if lp == nil {
		lp = &Lesson{}
		p.Lessons[id] = lp
	}
	return lp
}

// Write replaces the file at path with b atomically (a crash mid-write
// leaves the old file, never half of one).
func Write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Activity is what a learner is doing now, for a workshop's room: the
// lesson open, its step, since when, how the run has gone and the last
// ledger verdicts.
type Activity struct {
	Lesson    string            `json:"lesson,omitempty"`
	Step      int               `json:"step"`  // steps run in the open lesson
	Steps     int               `json:"steps"` // steps the lesson has
	StepSince time.Time         `json:"step_since"`
	Passed    int               `json:"passed"`
	Failed    int               `json:"failed"`
	Verdicts  map[string]string `json:"verdicts,omitempty"` // ledger variant → verdict
	// The last failed step, for the room: "[5/17] expect" and the first
	// line of why; cleared when a later step passes.
	FailStep string `json:"fail_step,omitempty"`
	FailWhy  string `json:"fail_why,omitempty"`
}

// Store is where one learner's progress lives: a file (a learner at their
// own terminal), or a workshop room's database (every `lab serve` of the
// room shares it, so a participant resumes on any of them). The screen
// saves through it the same way whichever it is.
type Store interface {
	Load(ctx context.Context) (*File, error)
	// Save writes a snapshot (the File as JSON); snapshots arrive in order.
	Save(ctx context.Context, snapshot []byte) error
	Where() string
}

// FileStore keeps progress in a file.
type FileStore struct{ Path string }

func (s FileStore) Load(context.Context) (*File, error)    { return Load(s.Path) }
func (s FileStore) Save(_ context.Context, b []byte) error { return Write(s.Path, b) }
func (s FileStore) Where() string                          { return s.Path }

// Verdict is one challenge run's result as a participant's machine reports
// it to a workshop room (lab challenge run --workshop): what the room
// keeps of it, nothing more.
type Verdict struct {
	Challenge string `json:"challenge"`
	Seed      uint64 `json:"seed"`
	Passed    bool   `json:"passed"`
	Line      string `json:"line"` // "seed 1: applied once 200 of 200, lost 0, twice 0"
}

// KeepNewerChallenges takes from other each challenge p does not have, or
// has an older state of: two writers of one participant's progress (their
// screen, and a verdict given through the workshop's door) each keep what
// the other wrote.
func (p *File) KeepNewerChallenges(other *File) {
	for name, c := range other.Challenges {
		if mine, ok := p.Challenges[name]; !ok || c.Updated.After(mine.Updated) {
			if p.Challenges == nil {
				p.Challenges = map[string]*Challenge{}
			}
			p.Challenges[name] = c
		}
	}
}

// Keep adds v to p's challenge progress.
func (p *File) Keep(v Verdict, now time.Time) {
	c := p.Challenge(v.Challenge)
	c.Runs++
	c.Updated = now
	c.Last = v.Line
	if v.Passed {
		c.Passed = true
		if !slices.Contains(c.Seeds, v.Seed) {
			c.Seeds = append(c.Seeds, v.Seed)
		}
	}
}

package ui

import (
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/anmitsu/go-shlex"

	"github.com/rmlab/lab/internal/progress"
)

// programs keeps the learner's challenge programs for the challenge step
// (steps.ProgramStore), which asks from its own goroutine: it holds copies
// under a lock, and the screen folds them into the progress on its own
// goroutine before each save (fold).
type programs struct {
	mu  sync.Mutex
	all map[string]*progress.Challenge
}

func newPrograms(p *progress.File) *programs {
	s := &programs{all: map[string]*progress.Challenge{}}
	for name, c := range p.Challenges {
		cp := *c
		s.all[name] = &cp
	}
	return s
}

func (s *programs) of(name string) *progress.Challenge {
	c := s.all[name]
	if c == nil {
		c = &progress.Challenge{}
		s.all[name] = c
	}
	return c
}

// Program is the command set for a challenge, its folder and the seed of
// its next run: 1, then one more after each pass.
func (s *programs) Program(name string) ([]string, string, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.of(name)
	seed := uint64(1)
	for slices.Contains(c.Seeds, seed) {
		seed++
	}
	return slices.Clone(c.Command), c.Dir, seed
}

// Ran keeps a run's verdict.
func (s *programs) Ran(name string, seed uint64, passed bool, summary string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.of(name)
	c.Runs++
	c.Last, c.Updated = summary, time.Now()
	if passed {
		c.Passed = true
		if !slices.Contains(c.Seeds, seed) {
			c.Seeds = append(c.Seeds, seed)
		}
	}
}

// set gives a challenge its command, run in dir.
func (s *programs) set(name string, argv []string, dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.of(name)
	c.Command, c.Dir, c.Updated = argv, dir, time.Now()
}

// fold copies what the step and the prompt changed into p.
func (s *programs) fold(p *progress.File) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, c := range s.all {
		cp := *c
		cp.Hints = p.Challenge(name).Hints // lab challenge hint's count is the file's
		*p.Challenge(name) = cp
	}
}

// programPrompt is the line where the learner gives the command that runs
// their program for the open challenge (p).
type programPrompt struct {
	c      *common
	open   bool
	name   string // the challenge
	input  textinput.Model
	errMsg string
}

func newProgramPrompt(c *common) *programPrompt { return &programPrompt{c: c} }

// Open starts editing the command of challenge name, from what it was.
func (p *programPrompt) Open(name string, argv []string, width int) tea.Cmd {
	p.open, p.name, p.errMsg = true, name, ""
	p.input = textinput.New()
	p.input.Prompt = ""
	p.input.CharLimit = 1000 // a command, not a file
	p.input.SetWidth(max(width, 10))
	p.input.SetValue(strings.Join(quoteArgs(argv), " "))
	p.input.CursorEnd()
	return p.input.Focus()
}

// Key handles a key while the prompt is open; done reports that it closed,
// and argv is the command given (nil when cancelled).
func (p *programPrompt) Key(k tea.KeyPressMsg) (cmd tea.Cmd, done bool, argv []string) {
	switch k.String() {
	case "esc":
		p.open = false
		return nil, true, nil
	case "enter":
		argv, err := shlex.Split(p.input.Value(), true)
		if err != nil || len(argv) == 0 {
			p.errMsg = p.c.t().ProgramEmpty
			return nil, false, nil
		}
		p.open = false
		return nil, true, argv // as given; the run rewrites go run DIR itself
	}
	var c tea.Cmd
	p.input, c = p.input.Update(k)
	return c, false, nil
}

// View is the prompt's line, in the footer's place.
func (p *programPrompt) View(width int) string {
	st, t := p.c.st, p.c.t()
	head := " " + st.Part.Render(t.ProgramFor+" "+p.name+":") + " "
	if p.errMsg != "" {
		head = " " + st.Bad.Render(p.errMsg) + " "
	}
	p.input.SetWidth(max(width-displayWidth(head)-1, 10))
	return fitLine(head+p.input.View(), width)
}

// quoteArgs quotes the words that need it, so the line reads back as the
// same command.
func quoteArgs(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t'\"\\") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
}

// cwd is the folder a program set on this screen runs in: the lab's.
func cwd() string {
	d, _ := os.Getwd()
	return d
}

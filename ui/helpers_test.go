package ui

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/steps"
)

// The teatest dependency registers -update through its golden package; the
// panel goldens share that flag (defining it twice would panic).
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/*.golden")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// fixtureLessons are lessons kept for the tests, so goldens do not move
// when the real lessons are edited.
const fixtureLessons = "testdata/lessons"

// pinnedNow is the clock golden tests see.
var pinnedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newTestApp builds an App on the fixture lessons with no services, a
// temp progress file and a pinned clock.
func newTestApp(t testing.TB, env *steps.Env, lang, start string, w, h int) *App {
	t.Helper()
	if os.Getenv(progress.Env) == "" || !strings.HasPrefix(os.Getenv(progress.Env), os.TempDir()) {
		setEnv(t, progress.Env, filepath.Join(t.TempDir(), "progress.json"))
	}
	if env == nil {
		env = &steps.Env{}
	}
	a, err := newApp(context.Background(), Options{Env: env, Lang: lang, LessonsDir: fixtureLessons, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	// Writes the last progress synchronously; background saves after it are
	// older and skipped, so the temp dir can be removed.
	t.Cleanup(a.shutdown)
	a.c.now = func() time.Time { return pinnedNow }
	a.c.st = NewStyles(true, true)
	a.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return a
}

// setEnv is t.Setenv for testing.TB (benchmarks too).
func setEnv(t testing.TB, k, v string) {
	old, had := os.LookupEnv(k)
	os.Setenv(k, v)
	t.Cleanup(func() {
		if had {
			os.Setenv(k, old)
		} else {
			os.Unsetenv(k)
		}
	})
}

// ascii pins the color profile: colors dropped, bold/underline/reverse
// kept, so goldens hold across terminals and still show emphasis.
func ascii(s string) string {
	var b bytes.Buffer
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.Ascii}
	_, _ = w.WriteString(s)
	return tidySGR(b.String())
}

// tidySGR drops the resets and empty sequences left where colors were
// removed, so a golden shows only the emphasis that survives the profile.
func tidySGR(s string) string {
	var b strings.Builder
	active := false
	for len(s) > 0 {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexByte(s, 'm')
		if j < 0 {
			b.WriteString(s)
			break
		}
		seq, params := s[:j+1], s[2:j]
		s = s[j+1:]
		if params == "" || params == "0" {
			if active {
				b.WriteString("\x1b[m")
				active = false
			}
			continue
		}
		b.WriteString(seq)
		active = true
	}
	return b.String()
}

// golden compares got with testdata/name.golden; -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ui -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (rerun with -update if the change is intended)\n--- want\n%s\n--- got\n%s",
			path, show(string(want)), show(got))
	}
}

// show makes escape codes visible in a failure message.
func show(s string) string { return strings.ReplaceAll(s, "\x1b", `\e`) }

// driver runs an App the way Bubble Tea does, without a terminal: each
// command in its own goroutine, messages fed back to Update on the test's
// goroutine, so tests read the model between messages without races.
type driver struct {
	t    testing.TB
	a    *App
	msgs chan tea.Msg
	done chan struct{}
	once sync.Once
	quit bool
}

func newDriver(t testing.TB, a *App) *driver {
	d := &driver{t: t, a: a, msgs: make(chan tea.Msg, 64), done: make(chan struct{})}
	t.Cleanup(d.stop)
	d.run(a.Init())
	return d
}

func (d *driver) stop() { d.once.Do(func() { close(d.done) }) }

func (d *driver) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		m := cmd()
		if m == nil {
			return
		}
		select {
		case d.msgs <- m:
		case <-d.done:
		}
	}()
}

func (d *driver) handle(m tea.Msg) {
	switch m := m.(type) {
	case tea.BatchMsg:
		for _, c := range m {
			d.run(c)
		}
		return
	case tea.QuitMsg:
		d.quit = true
		return
	}
	_, cmd := d.a.Update(m)
	d.run(cmd)
}

// press sends a key by its name ("enter", "down", "l", "R").
func (d *driver) press(k string) { d.handle(keyMsg(k)) }

// until processes messages until cond holds.
func (d *driver) until(what string, timeout time.Duration, cond func(*App) bool) {
	d.t.Helper()
	deadline := time.After(timeout)
	for !cond(d.a) {
		select {
		case m := <-d.msgs:
			d.handle(m)
		case <-deadline:
			d.t.Fatalf("timed out after %s waiting for %s; screen:\n%s", timeout, what, plainView(d.a.render()))
		}
	}
}

// keyMsg builds the key press Bubble Tea would deliver for a key name.
func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

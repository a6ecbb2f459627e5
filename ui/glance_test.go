package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rmlab/lab/internal/progress"
	"github.com/rmlab/lab/labs"
	"github.com/rmlab/lab/steps"
)

// At 80x24, the size most terminals open at, the frame after each step of
// lessons 1, 12 and 24 holds at once what the step is about: every row the
// text around it names that the tables hold, the queues' counts (a line of
// their own when the tables are shown) and, once a ledger ran, its
// verdict. Lesson 12 meets the broker only: its panels open on the queues,
// never on "this lesson shows no tables".
func TestAt80x24TheStepsRowsTheQueuesAndTheVerdictShareAFrame(t *testing.T) {
	ls, err := labs.Builtin("en")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ lesson, option string }{{"1", ""}, {"12", ""}, {"24", "after-confirm"}} {
		t.Run("lesson"+c.lesson, func(t *testing.T) {
			// Side by side, each in a namespace of its own: each mostly
			// waits on its workers and its polls.
			t.Parallel()
			env := walkEnv(t)
			l := labs.Find(ls, c.lesson)
			a, d := openLessonAt(t, env, l.ID, 80, 24)
			s, tx := a.sess, a.c.t()
			l = a.find(l.ID) // the screen's own lesson, whose steps the session runs
			named := 0
			for !s.Done() {
				prev := s.next
				st := s.steps[prev]
				runNextTaking(d, c.option)
				if r := s.results[prev]; !r.Passed && !r.Skipped {
					t.Fatalf("step %d (%s line %d) failed: %s", prev+1, st.Kind, st.Line, r.Why)
				}
				// The tables are polled: wait for a read after the step.
				time.Sleep(2 * pollEvery)
				frame := plainView(a.render())
				at := fmt.Sprintf("after step %d (%s line %d)", prev+1, st.Kind, st.Line)
				if len(l.Tables) == 0 && strings.Contains(frame, tx.NoTables) {
					t.Fatalf("%s: a lesson with no tables shows an empty Tables panel:\n%s", at, frame)
				}
				// Each table's row of the most recent value the text names.
				focus := namedValues(l, st)
				for _, td := range a.panels.tables.data {
					r := namedRow(td.rows, focus)
					if r < 0 || a.panels.active != panelTables {
						continue
					}
					named++
					v := ""
					for _, f := range focus {
						if slices.Contains(td.rows[r], f) {
							v = f
							break
						}
					}
					if !strings.Contains(frame, v) {
						t.Errorf("%s: the text names %s, which %s holds, and the frame does not show it:\n%s", at, v, td.title, frame)
					}
				}
				if len(l.Queues) > 0 && a.panels.active != panelQueues && !strings.Contains(frame, tx.Panels[panelQueues]+": ") {
					t.Errorf("%s: the queues' counts are not in the frame:\n%s", at, frame)
				}
				if len(a.panels.ledger.ledgers) > 0 && a.panels.active != panelLedger && !strings.Contains(frame, tx.Panels[panelLedger]+": ") {
					t.Errorf("%s: a ledger ran and its verdict is not in the frame:\n%s", at, frame)
				}
			}
			if len(a.panels.ledger.ledgers) == 0 {
				t.Errorf("lesson %s ended with no ledger to show", c.lesson)
			}
			if len(l.Tables) > 0 && named == 0 {
				t.Errorf("lesson %s: no step's text named a row the tables held: the check checked nothing", c.lesson)
			}
			quitAndCheck(t, d, a, env.Svc.Names.NS)
		})
	}
}

// openLessonAt opens lesson id on the screen at w×h, with progress of the
// test's own, and waits until it is open.
func openLessonAt(t *testing.T, env *steps.Env, id string, w, h int) (*App, *driver) {
	t.Helper()
	a, err := newApp(context.Background(), Options{Env: env, Lang: "en", Start: id,
		Progress: progress.FileStore{Path: filepath.Join(t.TempDir(), "progress.json")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.shutdown)
	d := newDriver(t, a)
	d.handle(tea.WindowSizeMsg{Width: w, Height: h})
	d.until("the lesson to open", 10*time.Second, func(a *App) bool { return idle(a) && a.sess.lessonID == id })
	return a, d
}

// runNextTaking runs the session's next step as a learner would, taking
// option at a menu (a predict's second option when none is named), and
// waits until it is done.
func runNextTaking(d *driver, option string) {
	s := d.a.sess
	prev := s.next
	st := s.steps[prev]
	if ch := s.pendingChoice(); ch != nil {
		if ch.Kind == "predict" {
			d.press("down")
		}
		for i, o := range steps.Options(ch) {
			if o.Name == option {
				for range i {
					d.press("down")
				}
			}
		}
	}
	d.press("enter")
	d.until(fmt.Sprintf("step %d (%s line %d)", prev+1, st.Kind, st.Line), walkStepTimeout,
		func(a *App) bool { return idle(a) && a.sess.next > prev })
}

package steps

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
)

// Option is one answer of a choice step.
type Option struct {
	Name string // used in when=CHOICE:NAME and ${CHOICE}
	Text string // what the learner reads
}

// Options parses a choice step's body: one "name: description" per line.
func Options(s *lab.Step) []Option {
	var out []Option
	for _, line := range strings.Split(s.Body, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "-"))
		if line == "" {
			continue
		}
		n, t, _ := strings.Cut(line, ":")
		out = append(out, Option{Name: strings.TrimSpace(n), Text: strings.TrimSpace(t)})
	}
	return out
}

// Choices lists each choice step of a lesson with its options, in order,
// the server steps' among them (when= names either).
func Choices(l *lab.Lesson) map[string][]Option {
	out := map[string][]Option{}
	for _, s := range l.Steps() {
		if s.Kind == "choice" || s.Kind == "server" {
			out[s.Attrs["name"]] = Options(s)
		}
	}
	return out
}

// Paths is every combination of options replay runs, each from the reset.
// A server step is no branch: the server the run meets decides it.
func Paths(l *lab.Lesson) []map[string]string {
	paths := []map[string]string{{}}
	for _, s := range l.Steps() {
		if s.Kind != "choice" {
			continue
		}
		var next []map[string]string
		for _, p := range paths {
			for _, o := range Options(s) {
				q := map[string]string{}
				for k, v := range p {
					q[k] = v
				}
				q[s.Attrs["name"]] = o.Name
				next = append(next, q)
			}
		}
		paths = next
	}
	return paths
}

// choiceKind asks the learner to pick an option (where to kill, which
// confirm to drop). Later steps use when=NAME:OPTION and ${NAME}.
//
//	```choice name=kill-at prompt="Where does the consumer die?"
//	between: after the mark commits, before the points
//	after: after both commits
//	```
type choiceKind struct{}

func (choiceKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "name", "prompt"); err != nil {
		return err
	}
	if err := requireAttrs(s, "name"); err != nil {
		return err
	}
	opts := Options(s)
	if len(opts) < 2 {
		return fmt.Errorf("%s: choice %s needs at least two options, one per line as name: description", s.Where(), s.Attrs["name"])
	}
	seen := map[string]bool{}
	for _, o := range opts {
		if o.Name == "" || strings.ContainsAny(o.Name, " ,:") || seen[o.Name] {
			return fmt.Errorf("%s: choice option %q: names are single words, unique", s.Where(), o.Name)
		}
		seen[o.Name] = true
	}
	return nil
}

func (choiceKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	name := s.Attrs["name"]
	taken, ok := r.Choices[name]
	if !ok {
		return fail("choice %s: no option chosen", name)
	}
	for _, o := range Options(s) {
		if o.Name == taken {
			return lab.Result{Passed: true, Observed: fmt.Sprintf("%s → %s: %s", name, o.Name, o.Text)}
		}
	}
	return fail("choice %s: %q is not one of its options", name, taken)
}

// sleepKind waits real time, e.g. for a lease to expire.
//
//	```sleep for=${lease:30}s
//	```
type sleepKind struct{}

func (sleepKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "for"); err != nil {
		return err
	}
	return requireAttrs(s, "for")
}

func (sleepKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	d, err := attrDuration(s, "for", 0)
	if err != nil {
		return fail("%v", err)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return lab.Result{Why: sayInterrupted.F()}
	}
	return lab.Result{Passed: true, Observed: sayWaited.F(d)}
}

// serverKind is a branch the server decides, not the learner: where
// servers answer differently (MariaDB 11.8 refuses B's UPDATE that MySQL
// lets through), the lesson shows what the server it runs on does, and
// says what the other does. Options are on and off, the fact's value; the
// run takes the path of the server's answer from its start
// (Run.DecideFromServer), and replay on each server runs that path.
//
//	```server name=snapshot fact=snapshot-isolation
//	off: B's UPDATE reads the newest row (MySQL; MariaDB with innodb_snapshot_isolation=OFF)
//	on: B's UPDATE fails with 1020 (MariaDB ≥ 11.6.2)
//	```
type serverKind struct{}

func (serverKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "name", "fact"); err != nil {
		return err
	}
	if err := requireAttrs(s, "name", "fact"); err != nil {
		return err
	}
	var facts []string
	for _, f := range lab.Facts {
		facts = append(facts, string(f))
	}
	if f := s.Attrs["fact"]; !slices.Contains(facts, f) {
		return fmt.Errorf("%s: server step: fact=%q is not one the lab reads%s; it reads %s", s.Where(), f, Suggest(f, facts), strings.Join(facts, ", "))
	}
	var names []string
	for _, o := range Options(s) {
		names = append(names, o.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"off", "on"}) {
		return fmt.Errorf("%s: server step %s: its options are on and off (the fact's value), one per line as name: what this server does", s.Where(), s.Attrs["name"])
	}
	return nil
}

func (serverKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	name := s.Attrs["name"]
	r.mu.Lock()
	taken := r.Choices[name]
	r.mu.Unlock()
	for _, o := range Options(s) {
		if o.Name == taken {
			return lab.Result{Passed: true, Observed: sayServerOption.F(name, o.Name, s.Attrs["fact"], o.Name, o.Text)}
		}
	}
	return fail("server step %s: the run took no path (%q)", name, taken)
}

// DecideFromServer sets each server step's choice to the fact's value on
// the run's servers, whatever was there (a resumed lesson's saved path may
// be another server's).
func (r *Run) DecideFromServer() {
	if r.Env == nil || r.Env.Svc == nil || r.Lesson == nil {
		return
	}
	caps := r.Env.Svc.Info.Caps()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.Lesson.Steps() {
		if s.Kind == "server" {
			v := "off"
			if caps[lab.Capability(s.Attrs["fact"])] {
				v = "on"
			}
			r.Choices[s.Attrs["name"]] = v
		}
	}
}

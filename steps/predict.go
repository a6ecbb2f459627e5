package steps

import (
	"context"
	"fmt"
	"strings"

	lab "github.com/rmlab/lab"
)

// predictKind asks the learner to predict an outcome before the steps that
// show it run. Unlike a choice it never branches: every run takes the same
// path, so replay runs it once. On the screen the learner's pick is in
// Run.Predictions before the step runs; in replay (no learner) the step
// takes the article's answer. Either way it passes and says what was
// predicted and what the article answers; the steps after it show why.
//
//	```predict name=confirm prompt="Does a confirm mean the consumer processed it?" answer=no
//	yes: yes, the message was handled
//	no: no, the confirm is the broker's hand-off only
//	```
type predictKind struct{}

func (predictKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "name", "prompt", "answer"); err != nil {
		return err
	}
	if err := requireAttrs(s, "name", "answer"); err != nil {
		return err
	}
	opts := Options(s)
	if len(opts) < 2 {
		return fmt.Errorf("%s: predict %s needs at least two options, one per line as name: description", s.Where(), s.Attrs["name"])
	}
	seen := map[string]bool{}
	for _, o := range opts {
		if o.Name == "" || strings.ContainsAny(o.Name, " ,:") || seen[o.Name] {
			return fmt.Errorf("%s: predict option %q: names are single words, unique", s.Where(), o.Name)
		}
		seen[o.Name] = true
	}
	if !seen[s.Attrs["answer"]] {
		return fmt.Errorf("%s: predict %s: answer=%s is not one of its options", s.Where(), s.Attrs["name"], s.Attrs["answer"])
	}
	return nil
}

// Prediction returns a predict step's answer option and the option taken:
// the learner's pick when there is one, else the answer. ok is false when
// the pick is not an option.
func Prediction(r *Run, s *lab.Step) (answer, picked Option, learner, ok bool) {
	var pick string
	pick, learner = r.Predictions[s.Attrs["name"]]
	if !learner {
		pick = s.Attrs["answer"]
	}
	var foundA, foundP bool
	for _, o := range Options(s) {
		if o.Name == s.Attrs["answer"] {
			answer, foundA = o, true
		}
		if o.Name == pick {
			picked, foundP = o, true
		}
	}
	if !foundP {
		picked = Option{Name: pick}
	}
	return answer, picked, learner, foundA && foundP
}

func (predictKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	name := s.Attrs["name"]
	answer, picked, learner, ok := Prediction(r, s)
	if !ok {
		return fail("predict %s: %q is not one of its options", name, picked.Name)
	}
	var b strings.Builder
	if learner {
		fmt.Fprintf(&b, "%s: you predicted %s: %s\n", name, picked.Name, picked.Text)
	} else {
		// Replay: no learner at the keys, so the article's answer is the
		// prediction on record.
		r.Predictions[name] = answer.Name
		fmt.Fprintf(&b, "%s: predicted %s (no learner: replay takes the article's answer)\n", name, answer.Name)
	}
	fmt.Fprintf(&b, "the article's answer: %s: %s\n", answer.Name, answer.Text)
	switch {
	case !learner:
		b.WriteString("watch the next steps show it")
	case picked.Name == answer.Name:
		b.WriteString("your prediction matches; watch the next steps show it")
	default:
		b.WriteString("your prediction differs; watch the next steps show what happens")
	}
	return lab.Result{Passed: true, Observed: b.String()}
}

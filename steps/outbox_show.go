package steps

import (
	"context"
	"fmt"
	"strings"

	lab "github.com/rmlab/lab"
	labsql "github.com/rmlab/lab/sql"
)

// showKind shows an embedded SQL file as written, without running it: the
// statements a program (the outbox relay) sends with its own values in the
// ? placeholders.
//
//	```show file=outbox/relay_mark_sent.sql
//	```
type showKind struct{}

func (showKind) Check(s *lab.Step) error {
	if err := checkAttrs(s, "file"); err != nil {
		return err
	}
	if err := requireAttrs(s, "file"); err != nil {
		return err
	}
	if _, err := labsql.File(s.Attrs["file"]); err != nil {
		return fmt.Errorf("%s: %v", s.Where(), err)
	}
	if strings.TrimSpace(s.Body) != "" {
		return fmt.Errorf("%s: show step takes file= and no body", s.Where())
	}
	return nil
}

func (showKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	text, err := labsql.File(s.Attrs["file"])
	if err != nil {
		return fail("%v", err)
	}
	text = r.Env.Svc.Names.SQL(strings.TrimSpace(text))
	return lab.Result{Passed: true, Observed: sayShown.F(s.Attrs["file"]) + "\n" + text}
}

package replay

import (
	"fmt"
	"io"
	"strings"

	"github.com/rmlab/lab/internal/plain"
)

// WriteTranscript writes Markdown: every statement or command sent and what
// came back, lesson by lesson, path by path.
func (r Report) WriteTranscript(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Lab replay transcript\n\n%s\n", r.Summary())
	for _, l := range r.Lessons {
		verdict := "passed"
		switch {
		case l.Skipped:
			verdict = "SKIPPED"
		case !l.Passed:
			verdict = "FAILED"
		}
		fmt.Fprintf(&b, "\n## %d. %s (`%s`): %s\n\n", l.Number, l.Title, l.ID, verdict)
		if l.ExplainOnly {
			b.WriteString("_Explain-only: nothing runs against a service._\n")
		}
		if l.Why != "" {
			fmt.Fprintf(&b, "> %s\n\n", l.Why)
		}
		option := "\x00"
		for _, st := range l.Steps {
			if st.Option != option {
				option = st.Option
				if option != "" {
					fmt.Fprintf(&b, "\n### Path: %s\n\n", option)
				}
			}
			mark := "✓"
			if !st.Passed {
				mark = "✗"
			} else if st.Skipped {
				mark = "↷ skipped:"
			}
			fmt.Fprintf(&b, "%s **%s** (line %d)\n\n", mark, st.Kind, st.Line)
			// A sql step's observation already interleaves each statement
			// with its answer, like a mysql client session.
			if len(st.Sent) > 0 && st.Kind != "sql" {
				lang := ""
				if st.Kind == "sql" || st.Kind == "reset" || st.Kind == "ledger" {
					lang = "sql"
				}
				fmt.Fprintf(&b, "```%s\n%s\n```\n\n", lang, strings.Join(terminate(st.Sent, lang == "sql"), "\n"))
			}
			if st.Observed != "" {
				fmt.Fprintf(&b, "```text\n%s\n```\n\n", st.Observed)
			}
			if st.Skipped && st.Why != "" {
				fmt.Fprintf(&b, "> %s\n\n", st.Why)
			}
			if !st.Passed && st.Why != "" {
				fmt.Fprintf(&b, "> **failed:** %s\n\n", st.Why)
			}
		}
	}
	// What the servers and programs answered is quoted as it came: the
	// file is read in terminals (cat, a CI log), so it holds no escape.
	_, err := io.WriteString(w, plain.Lines(b.String()))
	return err
}

func terminate(stmts []string, sql bool) []string {
	if !sql {
		return stmts
	}
	out := make([]string, len(stmts))
	for i, s := range stmts {
		out[i] = s + ";"
	}
	return out
}

package steps

import (
	"regexp"
	"strings"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/catalog"
)

// Data a step's output carries that no catalog translates, because it is
// not the lab's sentence: a mysql client's transcript, SQL, a server's or a
// broker's error text, a program's log line.
var (
	transcript = regexp.MustCompile(`^(\S+> |Query OK, |\d+ rows? in set|Rows matched: |[|+]|\s*-- |HTTP \d)`)
	programLog = regexp.MustCompile(`^(\[\S+\] )?\+\d+(\.\d+)?s `)
	serverErr  = regexp.MustCompile(`ERROR \d+ \([0-9A-Z]+\): .*$`)
	replyText  = regexp.MustCompile(`\d{3} [A-Z_]{3,} - [^)（）]*`)
)

// Untranslated is every line of results, as the screen says it in lang,
// that still holds an English sentence outside code, names, SQL and what
// the lesson itself wrote (its step bodies and attributes: an expectation
// quotes them). The kinds the screen says in its own words (a choice, a
// prediction, a ledger) are the screen's to check. Tests call it on every
// lesson in Chinese.
func Untranslated(lang string, l *lab.Lesson, results []lab.Result) []string {
	var quoted []string
	for _, b := range l.Blocks {
		if b.Step == nil {
			continue
		}
		for _, line := range strings.Split(b.Step.Body, "\n") {
			if line = strings.TrimSpace(line); len(line) >= 4 {
				quoted = append(quoted, line)
			}
			// An option's text (name: text), as a choice shows it.
			if _, text, ok := strings.Cut(line, ": "); ok && len(text) >= 4 {
				quoted = append(quoted, strings.TrimSpace(text))
			}
		}
		for _, v := range b.Step.Attrs {
			if len(v) >= 4 {
				quoted = append(quoted, v)
			}
		}
	}
	var out []string
	for _, r := range results {
		switch r.Kind {
		case "ledger", "choice", "predict":
			continue
		}
		var lines []string
		if r.Kind != "sql" && r.Kind != "reset" {
			lines = append(lines, r.Sent...)
		}
		lines = append(lines, strings.Split(r.Observed, "\n")...)
		if !r.Passed || r.Skipped {
			lines = append(lines, r.Why)
		}
		for _, raw := range lines {
			for _, line := range strings.Split(raw, "\n") {
				said := InLanguage(lang, line)
				if s := english(said, quoted); s != "" {
					out = append(out, r.Kind+" step: "+said+"  («"+s+"»)")
				}
			}
		}
	}
	return out
}

func english(line string, quoted []string) string {
	// An expectation is the lesson's own code (✓ contains TEXT).
	if transcript.MatchString(line) || programLog.MatchString(line) || strings.HasPrefix(line, "✓ ") {
		return ""
	}
	line = serverErr.ReplaceAllString(line, "")
	line = replyText.ReplaceAllString(line, "")
	for _, q := range quoted {
		line = strings.ReplaceAll(line, q, "")
	}
	return catalog.Sentence(line)
}

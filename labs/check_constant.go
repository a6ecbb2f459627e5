package labs

import (
	"regexp"
	"strconv"
	"strings"

	lab "github.com/rmlab/lab"
	labsql "github.com/rmlab/lab/sql"
)

// A check that reads nothing from a server holds whatever the servers
// answer: no run can fail it, and every mutant of its expected value is
// killed, so the mutation suite cannot find it either. lab check reports
// it (the lesson still loads: a test's stand-in lesson may be one): an expectation of an sql step whose every statement is a constant
// SELECT (SELECT 1, SELECT 'x' AS y), and a ledger whose every field is a
// number (no SELECT, no redis:, no queue read).

var (
	sqlStrings = regexp.MustCompile(`'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*"`)
	sqlAliases = regexp.MustCompile(`(?i)\bAS\s+` + "(`[^`]*`|\\w+)")
	sqlLiteral = regexp.MustCompile(`(?i)^SELECT(?:[\s0-9+\-*/%(),.]|\bTRUE\b|\bFALSE\b|\bNULL\b|\bDIV\b|\bMOD\b)*;?$`)
)

// constantSelect reports whether st reads nothing from the server: a
// SELECT of literals and arithmetic only (no FROM, no variable, no
// function).
func constantSelect(st string) bool {
	st = strings.TrimSpace(sqlStrings.ReplaceAllString(st, "0"))
	st = sqlAliases.ReplaceAllString(st, "")
	return sqlLiteral.MatchString(st)
}

// constantSQL reports whether every statement of an sql step is one.
func constantSQL(s *lab.Step) bool {
	body := s.Body
	if f := s.Attrs["file"]; f != "" {
		return false // the lab's own files read tables
	}
	stmts := labsql.Split(body)
	if len(stmts) == 0 {
		return false
	}
	for _, st := range stmts {
		if !constantSelect(st) {
			return false
		}
	}
	return true
}

// constantLedger reports whether every field of a ledger is a number.
func constantLedger(s *lab.Step) bool {
	fields := 0
	for _, line := range strings.Split(s.Body, "\n") {
		_, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields++
		v = strings.TrimSpace(v)
		if _, err := strconv.Atoi(v); err != nil && !constantSelect(v) {
			return false
		}
	}
	return fields > 0
}

// lintConstant reports the lesson's checks that cannot fail.
func lintConstant(l *lab.Lesson, add func(line int, format string, args ...any)) {
	all := l.Steps()
	for i, s := range all {
		switch s.Kind {
		case "ledger":
			if constantLedger(s) {
				add(s.Line, "ledger %s reads nothing from a server (every field is a number or a constant SELECT), so it holds whatever the servers answer: give applied: (or committed:, delivered:) a SELECT, redis:, broker: or outbox: read", s.Attrs["variant"])
			}
		case "expect":
			if s.Attrs["of"] != "" {
				continue // a named outcome: lintExpect checks that it exists
			}
			for j := i - 1; j >= 0; j-- {
				p := all[j]
				if p.Kind == "expect" || p.Kind == "choice" || p.Kind == "predict" {
					continue
				}
				if p.Kind == "sql" && constantSQL(p) {
					add(s.Line, "expect checks the sql step at line %d, which reads nothing from a server (a constant SELECT), so it holds whatever the server answers: select from a table the lesson changes", p.Line)
				}
				break
			}
		}
	}
}

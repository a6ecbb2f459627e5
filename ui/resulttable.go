package ui

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// tableSep is a separator line of an ASCII table as steps.Table draws it.
var tableSep = regexp.MustCompile(`^\+(-+\+)+$`)

// reflowTables turns each ASCII table in lines that is wider than w cells
// into one record per row, "column: value" under "*** row N ***", as the
// mysql client's \G does: a table the pane's wrap breaks apart reads as
// noise, while a record keeps every value beside its column's name. A
// table that fits is left as it is.
func reflowTables(lines []string, w int) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		if !tableSep.MatchString(lines[i]) || displayWidth(lines[i]) <= w {
			out = append(out, lines[i])
			continue
		}
		cols, rows, end, ok := parseTable(lines, i)
		if !ok {
			out = append(out, lines[i])
			continue
		}
		for r, row := range rows {
			out = append(out, fmt.Sprintf("*** row %d ***", r+1))
			for c, v := range row {
				out = append(out, cols[c]+": "+v)
			}
		}
		i = end
	}
	return out
}

// parseTable reads the table whose first separator is lines[at]: its
// column names, its rows, and the index of its last separator. The cells
// are cut at the separator's positions (in cells, so CJK values read
// right), never split on "|", which a value may hold.
func parseTable(lines []string, at int) (cols []string, rows [][]string, end int, ok bool) {
	sep := lines[at]
	var spans [][2]int
	start := 0
	for i, r := range sep {
		if r == '+' && i > 0 {
			spans = append(spans, [2]int{start + 2, i - 1})
			start = i
		}
	}
	cells := func(line string) []string {
		out := make([]string, len(spans))
		for i, s := range spans {
			out[i] = strings.TrimSpace(ansi.Cut(line, s[0], s[1]))
		}
		return out
	}
	if at+2 >= len(lines) || lines[at+2] != sep || !strings.HasPrefix(lines[at+1], "|") {
		return nil, nil, 0, false
	}
	cols = cells(lines[at+1])
	for i := at + 3; i < len(lines); i++ {
		switch {
		case lines[i] == sep:
			return cols, rows, i, true
		case strings.HasPrefix(lines[i], "|"):
			rows = append(rows, cells(lines[i]))
		default:
			return nil, nil, 0, false
		}
	}
	return nil, nil, 0, false
}

package ui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/steps"
)

// Every live panel polls on its own chain: poll -> data -> tick -> poll.
// The next tick is armed when the data arrives, never from the tick, so a
// slow query delays its own panel and never stacks behind itself. Each
// message carries the chain's generation: restart bumps it and a message
// from an older chain is dropped without re-arming, so a restarted panel
// never runs two chains.
const (
	pollEvery   = 500 * time.Millisecond
	pollTimeout = 800 * time.Millisecond
)

// The panel's own errors, in English; the table in text_i18n.go gives each
// language's words (driver errors are shown as the driver wrote them).
var (
	errNoMySQL  = steps.ErrNoMySQL.Error()
	errNoDB     = steps.ErrNoDatabase.Error()
	errNoTable  = steps.ErrNoTable.Error()
	errNoAnswer = "no answer within " + pollTimeout.String()
)

type tablesTickMsg struct{ gen int }

type tablesDataMsg struct {
	gen    int
	tables []tableData
}

// tableData is one TableView as last read.
type tableData struct {
	title, db string
	cols      []string
	rows      [][]string
	err       string
}

// tablesPanel shows the lesson's tables; rows that differ from the state
// before the last step are marked "+" and highlighted.
type tablesPanel struct {
	c      *common
	w, h   int
	active bool
	gen    int
	views  []lab.TableView
	run    *steps.Run // whose services the tables are read from
	data   []tableData
	// base is each table's rows (joined) when the last step started.
	base map[string]map[string]bool
	// focus are the values the text around the running step names
	// (`order:43:paid`): a row holding one is kept in view before a
	// changed one.
	focus []string
}

func newTablesPanel(c *common) *tablesPanel { return &tablesPanel{c: c} }

func (p *tablesPanel) SetSize(w, h int) { p.w, p.h = w, h }

// Restart points the panel at a lesson's tables and polls at once. The
// run says where they are: a lesson that reads a binary log may run on the
// lab's own MySQL server.
func (p *tablesPanel) Restart(l *lab.Lesson, run *steps.Run) tea.Cmd {
	p.gen++
	p.views, p.data, p.base, p.run = nil, nil, nil, run
	if l != nil {
		p.views = l.Tables
	}
	return p.poll()
}

// Refresh restarts the chain on the same tables (after a step: the
// learner should see what the step did now, not within 500 ms).
func (p *tablesPanel) Refresh() tea.Cmd {
	p.gen++
	return p.poll()
}

// MarkStep remembers the rows as they are before a step runs.
func (p *tablesPanel) MarkStep() {
	p.base = map[string]map[string]bool{}
	for _, t := range p.data {
		set := map[string]bool{}
		for _, r := range t.rows {
			set[strings.Join(r, "\x1f")] = true
		}
		p.base[t.title] = set
	}
}

func (p *tablesPanel) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tablesTickMsg:
		if msg.gen != p.gen {
			return nil
		}
		return p.poll()
	case tablesDataMsg:
		if msg.gen != p.gen {
			return nil
		}
		p.data = msg.tables
		gen := p.gen
		return tea.Tick(pollEvery, func(time.Time) tea.Msg { return tablesTickMsg{gen} })
	}
	return nil
}

func (p *tablesPanel) poll() tea.Cmd {
	gen, views, run, env := p.gen, p.views, p.run, p.c.env
	if len(views) == 0 {
		return nil // nothing to show: the chain stays idle until Restart
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
		defer cancel()
		var read []steps.TableRead
		if run != nil {
			read = run.Tables(ctx, views)
		} else {
			read = env.Tables(ctx, views)
		}
		return tablesDataMsg{gen: gen, tables: tablesData(read)}
	}
}

// tablesData is what the panel keeps of a read: every cell on one line,
// with nothing a terminal would act on, and the error in one line.
func tablesData(read []steps.TableRead) []tableData {
	out := make([]tableData, len(read))
	for i, t := range read {
		// A column's name is outside text too: a program may add one.
		cols := make([]string, len(t.Cols))
		for j, c := range t.Cols {
			cols[j] = oneLine(c)
		}
		out[i] = tableData{title: oneLine(t.Title), db: oneLine(t.DB), cols: cols}
		for _, r := range t.Rows {
			row := make([]string, len(r))
			for j, c := range r {
				row[j] = oneLine(c)
			}
			out[i].rows = append(out[i].rows, row)
		}
		if t.Err != nil {
			out[i].err = shortErr(t.Err)
		}
	}
	return out
}

// shortErr turns a read's error into one line a learner can act on; the
// table in text_i18n.go words the known ones in each language.
func shortErr(err error) string {
	switch {
	case errors.Is(err, steps.ErrNoMySQL):
		return errNoMySQL
	case errors.Is(err, steps.ErrNoDatabase):
		return errNoDB
	case errors.Is(err, steps.ErrNoTable):
		return errNoTable
	case errors.Is(err, context.DeadlineExceeded):
		return errNoAnswer
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return oneLine(s)
}

func (p *tablesPanel) View() string {
	st := p.c.st
	ih := p.h - 2
	var body []string
	switch {
	case len(p.views) == 0:
		body = []string{st.Dim.Render(p.c.t().NoTables)}
	case p.data == nil:
		body = []string{st.Dim.Render(p.c.t().Reading)}
	default:
		body = p.render(ih)
	}
	return pane(st, p.active, p.c.t().Panels[panelTables], body, p.w, p.h)
}

// render lays the tables out. Each table's title and header (and the gap
// after it) come first; the lines left are dealt out one row at a time, so
// in a short pane every table shows its first rows rather than one table
// showing all.
func (p *tablesPanel) render(h int) []string {
	n := len(p.data)
	share := make([]int, n)
	// A short pane (80x24) drops the blank line between tables before it
	// drops a row: the rows are what the step is about.
	gaps := 2*n+(n-1)+n <= h
	gapOf := func(i int) int {
		if gaps {
			return gap(i, n)
		}
		return 0
	}
	left := h
	for i := range p.data {
		share[i] = 2 + gapOf(i) // title, header (or error), the gap before the next
		left -= share[i]
	}
	for given := true; left > 0 && given; {
		given = false
		for i, t := range p.data {
			if left > 0 && t.err == "" && share[i]-2-gapOf(i) < len(t.rows) {
				share[i]++
				left--
				given = true
			}
		}
	}
	var out []string
	for i, t := range p.data {
		out = append(out, p.renderTable(t, share[i]-gapOf(i))...)
		if gapOf(i) == 1 {
			out = append(out, "")
		}
	}
	return out
}

// namedRow is the first row holding the earliest of values that any row
// holds, or -1.
func namedRow(rows [][]string, values []string) int {
	for _, v := range values {
		for i, r := range rows {
			if slices.Contains(r, v) {
				return i
			}
		}
	}
	return -1
}

// namedValues are the values the lesson names, the most recent first: in
// backticks in its prose, and as quoted literals in its steps' SQL (one
// word, no SQL: what a row's cell would hold); the text right after step
// st, then st itself, then what came before it back to the lesson's start.
// The first of them a table holds is the row the step is about (lesson 1
// names order:43:paid before its INSERT, and the row shows only at the
// COMMIT three steps later; lesson 24 names order-42-paid-v2 in its SQL).
func namedValues(l *lab.Lesson, st *lab.Step) []string {
	at := -1
	for i := range l.Blocks {
		if l.Blocks[i].Step == st {
			at = i
		}
	}
	if at < 0 {
		return nil
	}
	var out []string
	add := func(re *regexp.Regexp, text string) {
		ms := re.FindAllStringSubmatch(text, -1)
		for j := len(ms) - 1; j >= 0; j-- { // the block's last first
			v := ms[j][1]
			if len(v) >= 3 && len(v) <= 64 && !strings.ContainsAny(v, " (),;=%") && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	block := func(b lab.Block) {
		if b.Step == nil {
			add(codeSpan, b.Prose)
		} else if b.Step.Kind == "sql" {
			add(sqlLiteral, b.Step.Body)
		}
	}
	for i := at + 1; i < len(l.Blocks) && l.Blocks[i].Step == nil; i++ {
		block(l.Blocks[i])
	}
	for i := at; i >= 0; i-- {
		block(l.Blocks[i])
	}
	return out
}

var sqlLiteral = regexp.MustCompile(`'([^'\n]+)'`)

var codeSpan = regexp.MustCompile("`([^`\n]+)`")

// gap is 1 for every table but the last.
func gap(i, n int) int {
	if i < n-1 {
		return 1
	}
	return 0
}

// renderTable draws one table in at most h lines.
func (p *tablesPanel) renderTable(t tableData, h int) []string {
	st, tx := p.c.st, p.c.t()
	title := st.Bold.Render(t.title)
	db := " " + st.Dim.Render(t.db)
	if t.err != "" {
		msg := t.err
		if m, ok := tx.TableErrors[msg]; ok {
			msg = m
		}
		return []string{title + db, st.Warn.Render(msg)}
	}
	base, haveBase := p.base[t.title]
	key := func(r []string) string { return strings.Join(r, "\x1f") }
	cur := map[string]bool{}
	first := -1 // first changed row
	for i, r := range t.rows {
		cur[key(r)] = true
		if haveBase && !base[key(r)] && first < 0 {
			first = i
		}
	}
	// The row of the most recent value the text names, if it is here.
	if i := namedRow(t.rows, p.focus); i >= 0 {
		first = i
	}
	gone := 0
	for k := range base {
		if !cur[k] {
			gone++
		}
	}
	// Rows first; what no longer fits goes to the title ("rows 3-9 of 40")
	// rather than to lines of their own, and the "gone" note only takes a
	// line that is free.
	room := max(h-2, 0)
	rows, from := t.rows, 0
	if len(rows) > room && room == 0 {
		rows = nil
		title += st.Dim.Render(fmt.Sprintf(tx.RowsCount, len(t.rows)))
	} else if len(rows) > room {
		// Keep the first changed row in view: it is what the step did.
		if first >= room {
			from = min(first-room/2, len(rows)-room)
		}
		rows = rows[from : from+room]
		title += st.Dim.Render(fmt.Sprintf(tx.RowsRange, from+1, from+len(rows), len(t.rows)))
	}
	title += db
	// Column widths from the rows shown: measuring hundreds of hidden rows
	// every frame is the panel's main cost.
	widths := make([]int, len(t.cols))
	for i, c := range t.cols {
		widths[i] = displayWidth(c)
	}
	for _, r := range rows {
		for i, v := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], displayWidth(v))
			}
		}
	}
	line := func(vals []string) string {
		var b strings.Builder
		for i, v := range vals {
			if i > 0 {
				b.WriteString("  ")
			}
			if i < len(widths) {
				v = padRight(v, widths[i])
			}
			b.WriteString(v)
		}
		return b.String()
	}
	out := []string{title, "  " + st.Dim.Render(line(t.cols))}
	for _, r := range rows {
		if haveBase && !base[key(r)] {
			out = append(out, st.Changed.Render("+ "+line(r)))
		} else {
			out = append(out, "  "+line(r))
		}
	}
	if gone > 0 && len(rows) < room {
		out = append(out, st.Changed.Render(fmt.Sprintf(tx.RowsGone, gone)))
	}
	return out
}

package ui

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/steps"
)

// hostileText is one of each escape family a terminal acts on: OSC 8, 52
// and 2, CSI 2J and DSR, C1 CSI (U+009B), BEL, a bidi override.
const hostileText = "x\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\" + "\x1b]52;c;cm0gLXJm\x07" + "\x1b]2;title\x07" +
	"\x1b[2J\x1b[6n" + "\u009b2J" + "\x07" + "\u202eevil"

var sgr = regexp.MustCompile(`\x1b\[[0-9;:]*m`)

// escapesIn lists the control bytes and runes a rendered view holds
// beyond its line breaks (the styles are off: no colour profile).
func escapesIn(s string) []string {
	var out []string
	for _, r := range s {
		if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069) {
			out = append(out, strings.ToUpper(string(rune(r))))
		}
	}
	return out
}

// A row a participant writes into their own table reaches the tables pane
// (theirs, and the instructor's watching them) as plain text.
func TestATableCellCarriesNoEscapeToTheTerminal(t *testing.T) {
	svc := labtest.Connect(t).Svc
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db, err := services.Recreate(ctx, svc.MySQL, svc.Names, services.IdempotencyDB)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.MySQL.ExecContext(ctx, "INSERT INTO "+db+".consumed_operation (consumer_name, business_key, event_id, user_id, amount) VALUES ('c', ?, 'e', 1, 1)", hostileText); err != nil {
		t.Fatal(err)
	}
	// A column a program added, its name as hostile as a row.
	if _, err := svc.MySQL.ExecContext(ctx, "ALTER TABLE "+db+".consumed_operation ADD COLUMN `col\x1b]2;t\x07\u009b2J\u202eumn` INT"); err != nil {
		t.Fatal(err)
	}
	data := tablesData((&steps.Env{Svc: svc}).Tables(ctx, []lab.TableView{{Title: "consumed_operation", DB: services.IdempotencyDB, Query: "SELECT * FROM consumed_operation"}}))
	if data[0].err != "" || len(data[0].rows) != 1 {
		t.Fatalf("read: %+v", data[0])
	}
	c := &common{st: NewStyles(true, false), keys: DefaultKeyMap(), env: &steps.Env{}, lang: "en", now: time.Now}
	p := newTablesPanel(c)
	p.SetSize(120, 12)
	p.views = []lab.TableView{{Title: "consumed_operation"}}
	p.data = data
	v := p.View()
	// The pane's own styles (its bold title) are the code's; the cell's
	// line must carry nothing.
	var cell, head string
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, "link") {
			cell = l
		}
		if strings.Contains(l, "business_key") {
			head = l
		}
	}
	if e := escapesIn(cell); len(e) > 0 || cell == "" {
		t.Fatalf("the cell's line carries %q to the terminal:\n%q", e, v)
	}
	if e := escapesIn(head); len(e) > 0 || head == "" {
		t.Fatalf("the columns' line carries %q to the terminal:\n%q", e, v)
	}
	if !strings.Contains(v, "link") || !strings.Contains(v, "evil") {
		t.Errorf("the cell's text was lost:\n%s", v)
	}
}

// What a step observed (a message's body, a row, a key's value, a line a
// program wrote) reaches the lesson pane as plain text, its lines and the
// text around each escape kept.
func TestAStepsObservedTextCarriesNoEscapeToTheTerminal(t *testing.T) {
	c := &common{st: NewStyles(true, false), keys: DefaultKeyMap(), env: &steps.Env{}, lang: "en", now: time.Now}
	p := newLessonPane(c)
	s := &lab.Step{Kind: "consume"}
	r := lab.Result{Passed: true, Sent: []string{"basic.get " + hostileText},
		Observed: "← delivery tag=1 body=" + hostileText + "\nsecond line " + hostileText}
	lines, _ := p.result(s, r, 1, 200)
	v := strings.Join(lines, "\n")
	for _, l := range lines {
		// The pane's own styles (SGR) are the code's: all else is checked.
		if e := escapesIn(sgr.ReplaceAllString(l, "")); len(e) > 0 {
			t.Fatalf("the pane carries %q to the terminal:\n%q", e, v)
		}
	}
	if !strings.Contains(v, "second line") || strings.Count(v, "link") != 3 || !strings.Contains(v, "evil") {
		t.Errorf("the observed text was lost:\n%s", v)
	}
}

// A lesson's prose (a file anyone could hand an instructor) reaches the
// lesson pane with the styles the pane gives it and nothing else.
func TestALessonsProseCarriesNoEscapeToTheTerminal(t *testing.T) {
	st := NewStyles(true, false)
	var c proseCache
	lines := c.lines("k", "Some **prose** "+hostileText+" and more.\n\nA second paragraph.", 80, st)
	all := sgr.ReplaceAllString(strings.Join(lines, "\n"), "")
	if e := escapesIn(all); len(e) > 0 {
		t.Fatalf("the prose carries %q to the terminal:\n%q", e, all)
	}
	if !strings.Contains(all, "link") || !strings.Contains(all, "evil and more") {
		t.Errorf("the prose's text was lost:\n%s", all)
	}
}

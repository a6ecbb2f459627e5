package ui

import (
	"fmt"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/rmlab/lab/steps"
)

// The tables panel says in words what a missing database or table means
// (a lesson's CREATE TABLE comes later), not the driver's raw "Error 1146".
func TestAMissingTableOrDatabaseIsSaidInWords(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&gomysql.MySQLError{Number: 1146, Message: "Table 'x.t' doesn't exist"}, errNoTable},
		{fmt.Errorf("read: %w", &gomysql.MySQLError{Number: 1049, Message: "Unknown database 'x'"}), errNoDB},
		{&gomysql.MySQLError{Number: 1045, Message: "Access denied"}, "Error 1045: Access denied"},
	} {
		if got := shortErr(c.err); got != c.want {
			t.Errorf("%v: the panel says %q, want %q", c.err, got, c.want)
		}
	}
	if textZH.TableErrors[errNoTable] == "" || textZH.TableErrors[errNoTable] == errNoTable {
		t.Error("the Chinese screen has no words of its own for a table not created yet")
	}
}

// A paragraph of one path (<!-- when=fix:a -->) shows only on that path:
// lesson 10 told what a single active consumer did on the routing path.
func TestAParagraphOfOnePathShowsOnlyOnIt(t *testing.T) {
	prose := "Common.\n\n<!-- when=fix:a -->\nOnly on a.\n\n<!-- when=fix:b,c -->\nOn b or c.\n\nCommon again."
	s := &session{run: steps.NewRun(nil, nil, map[string]string{"fix": "b"})}
	got := onPath(prose, s)
	if want := "Common.\n\nOn b or c.\n\nCommon again."; got != want {
		t.Errorf("on path b: %q, want %q", got, want)
	}
	if got := onPath(prose, nil); strings.Contains(got, "<!--") || !strings.Contains(got, "Only on a.") || !strings.Contains(got, "On b or c.") {
		t.Errorf("before a run every paragraph shows, unmarked: %q", got)
	}
}

package ui

import (
	"fmt"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
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

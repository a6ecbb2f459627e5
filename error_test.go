package lab

import (
	"errors"
	"strings"
	"testing"
)

// An error says each of its parts through say, in the layout Error has.
func TestAnErrorSaysEachPartInTheOneLayout(t *testing.T) {
	e := &Error{What: "cannot reach X", Where: "h:1", Err: errors.New("refused"), Fix: "start it"}
	if got, want := e.Error(), "cannot reach X (h:1): refused\n  fix: start it"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if e.In(nil) != e.Error() {
		t.Errorf("In(nil) %q is not Error() %q", e.In(nil), e.Error())
	}
	got := e.In(func(s string) string { return "<" + strings.ToUpper(s) + ">" })
	if want := "<CANNOT REACH X> (<H:1>): <REFUSED>\n  <FIX: START IT>"; got != want {
		t.Errorf("In(say) = %q, want %q", got, want)
	}
}

package chaos

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// The checker fails a run it cannot judge: a queue the broker did not
// answer for, or faults that all found nothing to hit. Both used to pass.
func TestTheCheckerFailsARunItCannotJudge(t *testing.T) {
	clean := Summary{Orders: 10, Committed: 10, Once: 10, Faults: map[FaultKind]int{KillRelay: 2, DropConfirm: 1}, Missed: map[FaultKind]int{KillRelay: 1}}
	if v := violations(&clean); len(v) != 0 {
		t.Fatalf("a clean run has violations: %v", v)
	}
	unread := clean
	unread.InQueue = -1
	if v := violations(&unread); len(v) != 1 || !strings.Contains(v[0], "did not answer") {
		t.Fatalf("an unreadable queue: %v", v)
	}
	idle := clean
	idle.Missed = map[FaultKind]int{KillRelay: 2, DropConfirm: 1}
	if v := violations(&idle); len(v) != 1 || !strings.Contains(v[0], "none of the 3 faults") {
		t.Fatalf("faults that all missed: %v", v)
	}
	none := clean
	none.Faults, none.Missed = map[FaultKind]int{}, map[FaultKind]int{}
	if v := violations(&none); len(v) != 0 {
		t.Fatalf("a run with no faults asked for: %v", v)
	}
}

func TestTheProvidersFaultsAreNotInAllAndNeedAProvider(t *testing.T) {
	all, err := ParseFaults("all")
	if err != nil || slices.Contains(all, SMSTimeout) || slices.Contains(all, SMSError) {
		t.Fatalf("all is %v (%v): the provider's faults hit nothing in a pipeline without one", all, err)
	}
	o := Options{Orders: 10, Duration: 2 * time.Second, Faults: []FaultKind{SMSTimeout}}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "need an SMS provider") {
		t.Fatalf("sms-timeout without a provider: %v", err)
	}
	o.SMS = true
	if err := o.Validate(); err != nil {
		t.Fatalf("sms-timeout with a provider: %v", err)
	}
}

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

// Every order lands in exactly one category, whatever its commit, view and
// effect: a gap in classify would leave an order uncounted.
func TestEveryOrderLandsInExactlyOneCategory(t *testing.T) {
	for _, committed := range []bool{false, true} {
		for _, stale := range []bool{false, true} {
			for _, conflicted := range []bool{false, true} {
				for delta := int64(-1000); delta <= 1000; delta++ {
					if c := classify(committed, stale, delta, conflicted); c == catNone {
						t.Fatalf("committed=%t stale=%t conflicted=%t delta=%d falls in no category", committed, stale, conflicted, delta)
					}
				}
			}
		}
	}
	for _, c := range []struct {
		delta      int64
		conflicted bool
		want       category
	}{{0, false, catLost}, {1, false, catOnce}, {5, true, catOnce}, {5, false, catTwice}, {6, true, catTwice}, {2, false, catTwice}, {-436, false, catWrong}} {
		if got := classify(true, false, c.delta, c.conflicted); got != c.want {
			t.Errorf("a committed order whose effect changed by %d (conflicted %t): category %d, want %d", c.delta, c.conflicted, got, c.want)
		}
	}
	s := Summary{Orders: 3, Committed: 3, Once: 2}
	if v := violations(&s); len(v) != 1 || !strings.Contains(v[0], "1 of 3 orders fell in no category") {
		t.Fatalf("an order counted nowhere: %v", v)
	}
}

// Every seed plays, for a program of its own, each fault its role cannot
// survive unless right, at the point where it hurts, within a 5 s schedule.
func TestEverySeedPlaysTheFaultsAProgramOfItsOwnMustSurvive(t *testing.T) {
	for _, c := range []struct {
		role   string
		faults string
		want   []string
	}{
		{"consumer", "kill-consumer,cut-amqp,cut-mysql,drop-confirm,kill-relay", []string{"kill-consumer@ack", "kill-consumer@after-ack", "cut-amqp@"}},
		{"relay", "kill-relay,drop-confirm,cut-amqp,pause-relay,cut-mysql", []string{"kill-relay@publish", "kill-relay@confirm", "drop-confirm@", "cut-amqp@", "pause-relay@"}},
	} {
		faults, _ := ParseFaults(c.faults)
		for seed := uint64(1); seed <= 50; seed++ {
			o := Options{Seed: seed, Orders: 100, Duration: 5 * time.Second, Every: 700 * time.Millisecond, Faults: faults,
				Own: &Own{Role: c.role, Command: []string{"true"}}}
			var got []string
			for _, f := range Schedule(o) {
				if f.Must {
					got = append(got, string(f.Kind)+"@"+f.Point)
					if (f.Kind == CutAMQP || f.Kind == DropConfirm) && f.Target != c.role+"s" {
						t.Errorf("seed %d: %s aimed at %s, not the %ss", seed, f.Kind, f.Target, c.role)
					}
				}
			}
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s, seed %d: the faults it must survive are %v, want %v", c.role, seed, got, want)
			}
		}
	}
}

// The evidence ties each effect to a delivery to the copy that made it,
// of the message's amount, and each ack to an effect before it.
func TestEvidenceTiesEffectsToDeliveriesAndAcksToEffects(t *testing.T) {
	e := newEvidence()
	t0 := time.Unix(1000, 0)
	e.deliver("consumer-1", "order-7-paid", t0)
	e.deliver("consumer-2", "order-8-paid-conflict", t0)
	if !e.deliveredBy("consumer-1", 7, "", t0) || e.deliveredBy("consumer-2", 7, "", t0.Add(time.Hour)) {
		t.Fatal("a delivery counted for the wrong copy")
	}
	if e.deliveredBy("consumer-1", 7, "", t0.Add(-time.Millisecond)) {
		t.Fatal("an effect before the delivery counted as after it")
	}
	if !e.deliveredAmount("consumer-1", 7, 1, t0) || e.deliveredAmount("consumer-1", 7, -436, t0) {
		t.Fatal("the size of an effect is not checked against the message's amount")
	}
	if !e.deliveredAmount("consumer-2", 8, ConflictAmount, t0) {
		t.Fatal("a conflicting repeat's amount is not its own")
	}
	v := evidenceViolations([]finding{{7, "unearned", "a"}, {8, "unearned", "b"}, {9, "acked-unapplied", "c"}})
	if len(v) != 2 || !strings.Contains(v[0], "unearned") || !strings.Contains(v[0], "— 2;") || !strings.Contains(v[1], "acked") {
		t.Fatalf("the findings are not summed up by kind: %q", v)
	}
}

// A line a program writes that reads like a server's refusal is said in
// the verdict with what the role may do.
func TestARefusalInAProgramsOutputIsNamedWithWhatItsRoleMayDo(t *testing.T) {
	o := Options{Own: &Own{Role: "relay"}}
	for _, c := range []struct{ line, want string }{
		{"pymysql.err.OperationalError: (1142, \"UPDATE command denied to user 'rmlab_x_r1'@'localhost' for table `blog_idempotency_x`.`points_account`\")",
			"refused UPDATE on blog_idempotency_x.points_account: the relay may use outbox_event"},
		{"Error 1142 (42000): INSERT command denied to user 'rmlab_x_r1'@'127.0.0.1' for table 'lab_status'", "refused INSERT on lab_status"},
		{"consumer-2: apply x: Error 1143 (42000): UPDATE command denied to user 'rmlab_x_c2'@'127.0.0.1' for column 'consumer_name' in table 'consumed_conflict'",
			"refused UPDATE of column consumer_name on consumed_conflict:"},
		{"Exception (403) Reason: \"ACCESS_REFUSED - access to queue 'orders' in vhost '/' refused for user 'rmlab_x_relay'\"", "ACCESS_REFUSED"},
	} {
		if got := refusedLine("relay", o, c.line); !strings.Contains(got, c.want) {
			t.Errorf("%q: %q, want %q in it", c.line, got, c.want)
		}
	}
	if got := refusedLine("relay", o, "relay-1: published order-1-paid"); got != "" {
		t.Errorf("an ordinary line read as a refusal: %q", got)
	}
}

// A fault the role must survive that found no moment to land in makes the
// run no pass, and says auto-ack when the consumer consumed so; one that
// landed, or a fault not a must, says nothing.
func TestAMustFaultThatDidNotLandIsUntested(t *testing.T) {
	r := &Run{Hist: NewHistory(nil)}
	r.Hist.Keep()
	i := r.Hist.Fault(Fault{Kind: KillConsumer, Target: "consumer-1", Point: "ack", Must: true})
	r.Hist.FaultResult(i, "no ack from consumer-2 within the window: nothing killed (tried consumer-1 and consumer-2)")
	j := r.Hist.Fault(Fault{Kind: CutAMQP, Target: "consumers", Must: true})
	r.Hist.FaultResult(j, "consumer-1's connection was cut at its ack, which the broker never got")
	k := r.Hist.Fault(Fault{Kind: CutMySQL, Target: "outbox"})
	r.Hist.FaultResult(k, "no session open on blog_outbox_lab")
	v := r.untested(nil)
	if len(v) != 1 || !strings.Contains(v[0], "untested: kill-consumer at ack on consumer-1") || strings.Contains(v[0], "auto-ack") {
		t.Fatalf("untested: %q", v)
	}
	r.Hist.Event("consumer-1", "consume", "queue orders, no-ack (auto-ack)")
	if v := r.untested(nil); len(v) != 1 || !strings.Contains(v[0], "auto-ack") {
		t.Fatalf("untested with an auto-ack consumer: %q", v)
	}
}

// How a copy's lives ended is counted by how, in the order first seen.
func TestACopysExitsAreCountedByHow(t *testing.T) {
	r := &Run{Hist: NewHistory(nil)}
	r.Hist.Keep()
	for _, d := range []string{"exited, code 0: 25 done", "killed, code -1: x", "exited, code 0: 25 done", "exited, code 1: boom"} {
		r.Hist.Event("consumer-1", "exit", d)
	}
	r.Hist.Event("consumer-2", "exit", "killed, code -1: y")
	if got, want := r.Exits("consumer-1"), "exited with code 0 ×2, killed ×1, exited with code 1 ×1"; got != want {
		t.Errorf("Exits = %q, want %q", got, want)
	}
	if got := r.Exits("consumer-3"); got != "" {
		t.Errorf("a copy that never exited: %q", got)
	}
}

package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/services"
)

// Summary is what the checker found, and the run's figures.
type Summary struct {
	Seed     uint64 `json:"seed"`
	Pipeline string `json:"pipeline"`
	OwnRole  string `json:"own_role,omitempty"` // consumer or relay: a program of its own took that place
	Broker   string `json:"broker"`

	Orders    int `json:"orders"`    // asked for
	Committed int `json:"committed"` // purchase_order rows
	Once      int `json:"applied_once"`
	Lost      int `json:"lost"`                   // committed, effect applied 0 times
	Twice     int `json:"twice"`                  // committed, effect applied 2 or more times
	Phantom   int `json:"phantom"`                // applied, never committed
	Wrong     int `json:"wrong_amount,omitempty"` // committed, the account changed by what no number of applications gives
	Unplaced  int `json:"not_committed"`          // never committed, no effect
	Absorbed  int `json:"duplicates_absorbed"`
	Published int `json:"published"` // publishes, retries included
	Unsent    int `json:"unsent"`    // outbox rows still NEW or SENDING
	Dead      int `json:"dead"`
	InQueue   int `json:"left_in_queue"` // -1: the broker did not answer

	LostOrders  []int64 `json:"lost_orders,omitempty"` // the first 20
	TwiceOrders []int64 `json:"twice_orders,omitempty"`
	WrongOrders []int64 `json:"wrong_amount_orders,omitempty"`

	// A program of its own: the logins it ran with, what the servers
	// refused it (from its own lines), and its effects that no delivery,
	// confirm or publish explains (evidence.go).
	Users    []string `json:"users,omitempty"`
	Refused  []string `json:"refused,omitempty"`
	Evidence int      `json:"effects_without_evidence,omitempty"`

	// With orders of two events (Options.Order): orders whose view ended in
	// an older state than their newest event's.
	Stale       int     `json:"stale,omitempty"`
	StaleOrders []int64 `json:"stale_orders,omitempty"`

	// With conflicting repeats (Options.Conflict): how many orders had one,
	// and for how many no conflict was recorded in consumed_conflict.
	Conflicts          int     `json:"conflicts,omitempty"`
	ConflictsMissed    int     `json:"conflicts_not_recorded,omitempty"`
	ConflictMissOrders []int64 `json:"conflicts_not_recorded_orders,omitempty"`

	// Why explains the first orders that went wrong from the history, when
	// the run kept it (a program of its own).
	Why []Why `json:"why,omitempty"`

	LatencyP50 float64 `json:"commit_to_applied_p50_ms"`
	LatencyP99 float64 `json:"commit_to_applied_p99_ms"`
	LatencyMax float64 `json:"commit_to_applied_max_ms"`

	OrdersPerSecond float64           `json:"orders_per_second"`
	Faults          map[FaultKind]int `json:"faults"`        // planned and attempted
	Missed          map[FaultKind]int `json:"faults_missed"` // found nothing to hit (the target being restarted, the broker still coming back)
	Restarts        map[string]int    `json:"restarts"`
	Elapsed         string            `json:"elapsed"`
	Drain           string            `json:"drain"`
	Violations      []string          `json:"violations"`
	// Unproven says why a run with no violation proves nothing: the
	// evidence lay where a login within the program's reach could rewrite
	// it. Such a run is not passed.
	Unproven string         `json:"unproven,omitempty"`
	Notes    []string       `json:"notes,omitempty"`
	Timeline Timeline       `json:"timeline"`
	Schedule []Fault        `json:"schedule"`
	Options  map[string]any `json:"options"`
}

// OK reports whether every invariant held.
func (s *Summary) OK() bool { return len(s.Violations) == 0 && s.Unproven == "" }

// Verdict is PASS, FAIL (a violation) or UNPROVEN (none, but the evidence
// lay within an administrator's login's reach).
func (s *Summary) Verdict() string {
	switch {
	case len(s.Violations) > 0:
		return "FAIL"
	case !s.OK():
		return "UNPROVEN"
	}
	return "PASS"
}

// check reads the final state: every committed order's account (one point
// per application of its effect), the outbox's statuses, the queue, and the
// history's first application of each order for the latency.
func (r *Run) check(ctx context.Context) (*Summary, error) {
	o := r.O
	s := &Summary{Seed: o.Seed, Pipeline: o.Pipeline.Name, Orders: o.Orders, Faults: r.faultsBy,
		Schedule: r.Plan, Notes: r.Notes, Absorbed: r.Hist.Count("duplicate"), Published: r.Hist.Count("published"),
		Broker: r.version, Violations: []string{}}
	if o.Own != nil {
		s.OwnRole = o.Own.Role
	}
	if s.Broker == "" {
		s.Broker = r.cfg.From("amqp")
	}
	s.Options = map[string]any{"orders": o.Orders, "duration": o.Duration.String(), "relays": o.Relays, "consumers": o.Consumers,
		"faults": o.Faults, "every": o.Every.String(), "lease_seconds": o.Lease, "namespace": o.Namespace}
	outbox, idem := r.names.Name(services.OutboxDB), r.names.Name(services.IdempotencyDB)

	committed := map[int64]float64{} // order → commit time (unix seconds)
	rows, err := r.server.QueryContext(ctx, "SELECT p.id, UNIX_TIMESTAMP(e.created_at) FROM "+outbox+".purchase_order p JOIN "+
		outbox+".outbox_event e ON e.aggregate_id=p.id")
	if err != nil {
		return nil, fmt.Errorf("read the committed orders in %s: %w", outbox, err)
	}
	for rows.Next() {
		var id int64
		var at float64
		if err := rows.Scan(&id, &at); err != nil {
			rows.Close()
			return nil, err
		}
		committed[id] = at
	}
	rows.Close()
	s.Committed = len(committed)

	rows, err = r.server.QueryContext(ctx, "SELECT user_id, points FROM "+idem+".points_account WHERE user_id BETWEEN 1 AND ?", o.Orders)
	if err != nil {
		return nil, fmt.Errorf("read the accounts in %s: %w", idem, err)
	}
	points := map[int64]int64{}
	for rows.Next() {
		var id, p int64
		if err := rows.Scan(&id, &p); err != nil {
			rows.Close()
			return nil, err
		}
		points[id] = p
	}
	rows.Close()
	if r.sms != nil {
		// The effect is the SMS: each order's user is sent one.
		points = r.sms.sent(o.Orders)
	}
	stale := map[int64]bool{}
	if o.Order {
		// The effect is the order's newest state: PAID at version 2.
		if points, stale, err = r.orderStates(ctx); err != nil {
			return nil, err
		}
	}
	conflicted := func(id int64) bool { return o.Conflict > 0 && id%int64(o.Conflict) == 0 }
	list := func(ids *[]int64, id int64) {
		if len(*ids) < 20 {
			*ids = append(*ids, id)
		}
	}
	for id := int64(1); id <= int64(o.Orders); id++ {
		_, ok := committed[id]
		switch classify(ok, stale[id], points[id]-r.startBalance(id), conflicted(id)) {
		case catStale:
			s.Stale++
			list(&s.StaleOrders, id)
		case catLost:
			s.Lost++
			list(&s.LostOrders, id)
		case catOnce:
			s.Once++
		case catTwice:
			s.Twice++
			list(&s.TwiceOrders, id)
		case catWrong:
			s.Wrong++
			list(&s.WrongOrders, id)
		case catPhantom:
			s.Phantom++
		case catUnplaced:
			s.Unplaced++
		}
	}
	if o.Conflict > 0 {
		if err := r.checkConflicts(ctx, s, committed, conflicted); err != nil {
			return nil, err
		}
	}
	err = r.server.QueryRowContext(ctx, "SELECT COALESCE(SUM(status IN ('NEW','SENDING')),0), COALESCE(SUM(status='DEAD'),0) FROM "+outbox+".outbox_event").
		Scan(&s.Unsent, &s.Dead)
	if err != nil {
		return nil, fmt.Errorf("read the outbox's statuses in %s: %w", outbox, err)
	}
	s.InQueue = queueDepth(ctx, r.broker, r.names.Name(QueueName))

	// The commit's time is the server's clock, an application's the
	// lab's (converted from the audit's server time, or the SMS provider's
	// own): one clock once offset. An effect before its commit is no
	// latency; the evidence names it.
	var lat []float64
	for id, at := range r.Hist.applied() {
		if c, ok := committed[id]; ok {
			if ms := float64(at.Add(-r.clock.offset).UnixMicro())/1e3 - c*1e3; ms >= 0 {
				lat = append(lat, ms)
			}
		}
	}
	s.LatencyP50, s.LatencyP99, s.LatencyMax = quantile(lat, 0.50), quantile(lat, 0.99), quantile(lat, 1)
	s.Missed = map[FaultKind]int{}
	for _, f := range r.Hist.Timeline().Faults {
		if !landed(f.Result) {
			s.Missed[f.Kind]++
		}
	}
	s.Violations = violations(s)
	var found []finding
	if r.O.Own != nil {
		if found, err = r.checkEvidence(ctx); err != nil {
			return nil, err
		}
		s.Evidence = len(found)
		s.Violations = append(s.Violations, evidenceViolations(found)...)
		s.Refused = refusals(r.Hist.Outputs(), r.O.Own.Role, r.O)
		s.Violations = append(s.Violations, r.untested(s)...)
		s.Unproven = r.unproven
	}
	if r.O.Own != nil && !s.OK() {
		s.Why = append(r.explainFindings(ctx, found), r.explain(ctx, s)...)
	}
	return s, nil
}

// checkConflicts counts the committed orders with a conflicting repeat for
// which consumed_conflict holds no row of the business key.
func (r *Run) checkConflicts(ctx context.Context, s *Summary, committed map[int64]float64, conflicted func(int64) bool) error {
	idem := r.names.Name(services.IdempotencyDB)
	q := "SELECT DISTINCT business_key FROM " + idem + ".consumed_conflict"
	if r.O.Own != nil {
		// A key counts where the audit saw a conflict row inserted under
		// it: a program may UPDATE a row to another key unseen.
		q = "SELECT DISTINCT c.business_key FROM " + idem + ".consumed_conflict c JOIN " + idem + ".lab_conflict a ON a.business_key = c.business_key"
	}
	rows, err := r.server.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("read the recorded conflicts in %s.consumed_conflict: %w", idem, err)
	}
	recorded := map[string]bool{}
	for rows.Next() {
		var k string
		if rows.Scan(&k) == nil {
			recorded[k] = true
		}
	}
	rows.Close()
	for id := int64(1); id <= int64(r.O.Orders); id++ {
		if _, ok := committed[id]; !ok || !conflicted(id) {
			continue
		}
		s.Conflicts++
		if !recorded[fmt.Sprintf("order:%d:paid", id)] {
			s.ConflictsMissed++
			if len(s.ConflictMissOrders) < 20 {
				s.ConflictMissOrders = append(s.ConflictMissOrders, id)
			}
		}
	}
	return nil
}

// missed reports whether a fault's result says it hit nothing.
func missed(result string) bool {
	for _, p := range []string{"not running", "already finished", "no such process", "the broker is still coming back", "no session open", "it died before", "already frozen"} {
		if strings.HasPrefix(result, p) {
			return true
		}
	}
	return false
}

// category is where one order ends: every order lands in exactly one.
type category int

const (
	catNone category = iota // a gap in classify: a checker bug, reported as a violation
	catOnce
	catLost
	catTwice
	catWrong
	catStale
	catPhantom
	catUnplaced
)

// classify places one order from whether it was committed, whether its
// view ended stale, and how much its effect changed (its account's points
// since the start, or the SMS sent, or 1 for an order PAID at version 2).
// A conflicted order may have had its repeat (ConflictAmount) applied
// instead of its own event: that is once too.
func classify(committed, stale bool, delta int64, conflicted bool) category {
	switch {
	case committed && stale:
		return catStale
	case committed && delta == 0:
		return catLost
	case committed && (delta == 1 || conflicted && delta == ConflictAmount):
		return catOnce
	case committed && delta > 1:
		return catTwice
	case committed:
		return catWrong
	case delta != 0:
		return catPhantom
	case !committed:
		return catUnplaced
	}
	return catNone
}

func violations(s *Summary) []string {
	v := []string{}
	if n := s.Once + s.Lost + s.Twice + s.Wrong + s.Stale + s.Phantom + s.Unplaced; n != s.Orders {
		v = append(v, sayVNoCategory.F(s.Orders-n, s.Orders))
	}
	if s.Wrong > 0 {
		v = append(v, sayVAmount.F(s.Wrong, s.WrongOrders))
	}
	if s.Lost > 0 {
		v = append(v, sayVLost.F(s.Lost, s.LostOrders))
	}
	if s.Twice > 0 {
		v = append(v, sayVTwice.F(s.Twice, s.TwiceOrders))
	}
	if s.Stale > 0 {
		v = append(v, sayVStale.F(s.Stale, s.StaleOrders))
	}
	if s.ConflictsMissed > 0 {
		v = append(v, sayVConflict.F(
			s.ConflictsMissed, s.Conflicts, s.ConflictMissOrders))
	}
	if s.Phantom > 0 {
		v = append(v, fmt.Sprintf("phantom: %d orders were applied but never committed", s.Phantom))
	}
	if s.Committed < s.Orders {
		v = append(v, fmt.Sprintf("placed: only %d of %d orders were committed", s.Committed, s.Orders))
	}
	if s.Unsent > 0 {
		v = append(v, fmt.Sprintf("unsent: %d outbox events are still NEW or SENDING after the drain", s.Unsent))
	}
	if s.Dead > 0 {
		v = append(v, fmt.Sprintf("dead: %d outbox events are DEAD", s.Dead))
	}
	if s.InQueue > 0 {
		v = append(v, fmt.Sprintf("queue: %d messages are still in the queue after the drain", s.InQueue))
	}
	if s.InQueue < 0 {
		v = append(v, "queue: the broker did not answer for the queue at check time, so what is left in it is unknown")
	}
	planned, missedAll := 0, 0
	for k, n := range s.Faults {
		planned += n
		missedAll += s.Missed[k]
	}
	if planned > 0 && missedAll == planned {
		v = append(v, fmt.Sprintf("faults: none of the %d faults found anything to hit, so the run tested no fault", planned))
	}
	return v
}

// quantile is the q-quantile (nearest rank) of xs in ms, rounded to 0.1.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	i = max(0, min(i, len(s)-1))
	return float64(time.Duration(s[i]*1e6).Round(100*time.Microsecond)) / 1e6
}

// orderStates reads order_view: 1 for an order PAID at version 2 (its
// newest event), 0 for one no event reached, and stale for one left in an
// older state.
func (r *Run) orderStates(ctx context.Context) (map[int64]int64, map[int64]bool, error) {
	idem := r.names.Name(services.IdempotencyDB)
	rows, err := r.server.QueryContext(ctx, "SELECT order_id, status, version FROM "+idem+".order_view")
	if err != nil {
		return nil, nil, fmt.Errorf("read the orders' states in %s.order_view: %w", idem, err)
	}
	defer rows.Close()
	done, stale := map[int64]int64{}, map[int64]bool{}
	for rows.Next() {
		var id, version int64
		var status string
		if err := rows.Scan(&id, &status, &version); err != nil {
			return nil, nil, err
		}
		switch {
		case status == "PAID" && version == 2:
			done[id] = 1
		case status != "NONE":
			stale[id] = true
		}
	}
	return done, stale, rows.Err()
}

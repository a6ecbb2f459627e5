package chaos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/services"
)

// The final state of a table a program writes proves nothing by itself
// (Jepsen's rule): the checker ties every effect to the operation that
// caused it. The proxies see every delivery, ack, publish and confirm of
// each copy; the audit triggers see every committed change and which
// copy's login made it. An effect with no delivery behind it, of another
// size than the message's, a conflict no delivery carried, an ack before
// any effect, a SENT with no confirm, a publish of no event: each is a
// violation, named with its evidence.

// evidence is what the copies' proxies saw, per copy.
type evidence struct {
	mu        sync.Mutex
	delivered map[string]map[int64][]seen       // copy → order → deliveries
	confirmed map[string]map[string][]time.Time // copy → message id → confirms it read
	published map[string]map[string][]time.Time // copy → message id → publishes the broker got
	forbidden []string
	sms       []smsSent
	early     []ackSeen // acks held while no effect of their order was visible
}

type seen struct {
	t  time.Time
	id string
}

type ackSeen struct {
	copy  string
	t     time.Time
	id    string
	order int64
	// probeAck: the question asked of the effect, asked again at the end
	q    string
	args []any
}

type smsSent struct {
	to int64
	t  time.Time
}

func newEvidence() *evidence {
	return &evidence{delivered: map[string]map[int64][]seen{}, confirmed: map[string]map[string][]time.Time{},
		published: map[string]map[string][]time.Time{}}
}

func (e *evidence) deliver(copy, id string, t time.Time) {
	n, ok := OrderOf(id)
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.delivered[copy] == nil {
		e.delivered[copy] = map[int64][]seen{}
	}
	e.delivered[copy][n] = append(e.delivered[copy][n], seen{t, id})
}

func (e *evidence) note(m map[string]map[string][]time.Time, copy, id string, t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m[copy] == nil {
		m[copy] = map[string][]time.Time{}
	}
	m[copy][id] = append(m[copy][id], t)
}

func (e *evidence) forbid(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forbidden = append(e.forbidden, s)
}

func (e *evidence) sent(to int64, t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sms = append(e.sms, smsSent{to, t})
}

// deliveredBy reports whether copy ("" for any) had been delivered a
// message of order n, with id when id is not "", by t.
func (e *evidence) deliveredBy(copy string, n int64, id string, t time.Time) bool {
	for c, byOrder := range e.delivered {
		if copy != "" && c != copy {
			continue
		}
		for _, d := range byOrder[n] {
			if !d.t.After(t) && (id == "" || d.id == id) {
				return true
			}
		}
	}
	return false
}

// amountOf is the amount a message carries: a conflicting repeat's, else 1.
func amountOf(id string) int64 {
	if strings.HasSuffix(id, "-conflict") {
		return ConflictAmount
	}
	return 1
}

// dbClock turns the database server's times (the audit's) into the lab's
// (the proxies'): offset is lab − server, measured by round trips before
// the run, and tol covers the error of that measure.
type dbClock struct {
	offset, tol time.Duration
}

func (c dbClock) lab(serverSeconds float64) time.Time {
	return time.UnixMicro(int64(serverSeconds * 1e6)).Add(c.offset)
}

// measureClock estimates the server's clock against the lab's from the
// quickest of a few round trips.
func measureClock(ctx context.Context, r *Run) (dbClock, error) {
	best := dbClock{tol: time.Hour}
	for range 5 {
		t0 := time.Now()
		var s float64
		if err := r.server.QueryRowContext(ctx, "SELECT UNIX_TIMESTAMP(SYSDATE(6))").Scan(&s); err != nil {
			return dbClock{}, fmt.Errorf("read the MySQL server's clock: %w", err)
		}
		rtt := time.Since(t0)
		mid := t0.Add(rtt / 2)
		if rtt < best.tol {
			best = dbClock{offset: mid.Sub(time.UnixMicro(int64(s * 1e6))), tol: rtt}
		}
	}
	// The audit's time is when the statement ran; a few ms more for the
	// proxy's reading of the frame that came before it.
	best.tol += 20 * time.Millisecond
	return best, nil
}

// finding is one effect with no evidence behind it.
type finding struct {
	order int64
	kind  string // the violation's name
	text  string
}

// maxFindings bounds what is listed of one kind.
const maxFindings = 3

// checkEvidence ties every effect of a program of its own to what caused
// it and returns what it could not tie.
func (r *Run) checkEvidence(ctx context.Context) ([]finding, error) {
	e := r.ev
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []finding
	for _, f := range e.forbidden {
		out = append(out, finding{kind: "forbidden", text: f})
	}
	copyOf := map[string]string{}
	for c, u := range r.dbUsers {
		copyOf[u.name] = c
	}
	at := func(t time.Time) string { return fmt.Sprintf("%.2fs", t.Sub(r.Hist.Start()).Seconds()) }
	idem, outbox := r.names.Name(services.IdempotencyDB), r.names.Name(services.OutboxDB)
	effects := map[int64][]time.Time{} // order → when an effect of it committed (any copy)

	if r.O.Own.Role == "consumer" && !r.O.SMS && !r.O.Order {
		rows, err := r.server.QueryContext(ctx, "SELECT user_id, delta, at, who FROM "+idem+".lab_applied ORDER BY seq")
		if err != nil {
			return nil, fmt.Errorf("read the lab's audit %s.lab_applied: %w", idem, err)
		}
		for rows.Next() {
			var n, delta int64
			var sec float64
			var who string
			if err := rows.Scan(&n, &delta, &sec, &who); err != nil {
				rows.Close()
				return nil, err
			}
			t := r.clock.lab(sec)
			effects[n] = append(effects[n], t)
			c, ours := copyOf[who]
			if !ours {
				continue
			}
			by := t.Add(r.clock.tol)
			switch {
			case !e.deliveredBy(c, n, "", by):
				out = append(out, finding{n, "unearned", fmt.Sprintf("%s changed account %d by %+d at %s, and no message of order %d had been delivered to it", c, n, delta, at(t), n)})
			case !e.deliveredAmount(c, n, delta, by):
				out = append(out, finding{n, "size", fmt.Sprintf("%s changed account %d by %+d at %s; the messages of order %d it was delivered carry %s: add the message's amount, never set the balance", c, n, delta, at(t), n, e.amounts(c, n))})
			}
		}
		rows.Close()
		if err := r.checkConflictRows(ctx, copyOf, at, effects, &out); err != nil {
			return nil, err
		}
	}
	if r.O.Own.Role == "consumer" && r.O.Order {
		rows, err := r.server.QueryContext(ctx, "SELECT order_id, new_status, new_version, at, who FROM "+idem+".lab_view ORDER BY seq")
		if err != nil {
			return nil, fmt.Errorf("read the lab's audit %s.lab_view: %w", idem, err)
		}
		for rows.Next() {
			var n int64
			var status, who string
			var version int
			var sec float64
			if err := rows.Scan(&n, &status, &version, &sec, &who); err != nil {
				rows.Close()
				return nil, err
			}
			t := r.clock.lab(sec)
			effects[n] = append(effects[n], t)
			c, ours := copyOf[who]
			if !ours {
				continue
			}
			id := map[string]string{"CREATED": fmt.Sprintf("order-%d-created", n), "PAID": fmt.Sprintf("order-%d-paid", n)}[status]
			want := map[string]int{"CREATED": 1, "PAID": 2}[status]
			if id == "" || version != want || !e.deliveredBy(c, n, id, t.Add(r.clock.tol)) {
				out = append(out, finding{n, "unearned", fmt.Sprintf("%s set order %d to %s v%d at %s, and no event of that state and version had been delivered to it", c, n, status, version, at(t))})
			}
		}
		rows.Close()
	}
	if r.O.Own.Role == "consumer" && r.O.SMS {
		for _, s := range e.sms {
			effects[s.to] = append(effects[s.to], s.t)
			if !e.deliveredBy("", s.to, "", s.t) {
				out = append(out, finding{s.to, "unearned", fmt.Sprintf("an SMS to user %d went out at %s, before any message of order %d had been delivered", s.to, at(s.t), s.to)})
			}
		}
	}
	for _, a := range e.early {
		// Early only if the effect did come, after the ack: one that never
		// came is a lost order, a conflict not recorded, a stale view,
		// which the final state names.
		came := false
		if a.q == "" {
			came = slices.ContainsFunc(e.sms, func(s smsSent) bool { return s.to == a.order })
		} else if err := r.server.QueryRowContext(ctx, a.q, a.args...).Scan(&came); err != nil {
			return nil, fmt.Errorf("look again for the effect of an ack of %s: %w", a.id, err)
		}
		if !came {
			continue
		}
		out = append(out, finding{a.order, "acked-unapplied", fmt.Sprintf("%s acked %s at %s before its effect had committed (the lab looked before it let the ack through): ack only after the commit", a.copy, a.id, at(a.t))})
	}
	if r.O.Own.Role == "relay" {
		if err := r.checkRelayEvidence(ctx, outbox, copyOf, at, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (e *evidence) deliveredAmount(copy string, n, delta int64, by time.Time) bool {
	for _, d := range e.delivered[copy][n] {
		if !d.t.After(by) && amountOf(d.id) == delta {
			return true
		}
	}
	return false
}

func (e *evidence) amounts(copy string, n int64) string {
	var a []string
	for _, d := range e.delivered[copy][n] {
		if s := strconv.FormatInt(amountOf(d.id), 10); !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return strings.Join(a, " or ")
}

// checkConflictRows: a conflict row is a delivery to its copy of the
// event it names, after both events of its business key had come.
func (r *Run) checkConflictRows(ctx context.Context, copyOf map[string]string, at func(time.Time) string, effects map[int64][]time.Time, out *[]finding) error {
	idem := r.names.Name(services.IdempotencyDB)
	rows, err := r.server.QueryContext(ctx, "SELECT business_key, event_id, at, who FROM "+idem+".lab_conflict ORDER BY seq")
	if err != nil {
		return fmt.Errorf("read the lab's audit %s.lab_conflict: %w", idem, err)
	}
	defer rows.Close()
	e := r.ev
	for rows.Next() {
		var key, id, who string
		var sec float64
		if err := rows.Scan(&key, &id, &sec, &who); err != nil {
			return err
		}
		t := r.clock.lab(sec)
		n, _ := OrderOf(key)
		effects[n] = append(effects[n], t)
		c, ours := copyOf[who]
		if !ours {
			continue
		}
		by := t.Add(r.clock.tol)
		orig, conflict := fmt.Sprintf("order-%d-paid", n), fmt.Sprintf("order-%d-paid-conflict", n)
		switch {
		case r.O.Conflict == 0 || n%int64(r.O.Conflict) != 0:
			*out = append(*out, finding{n, "invented-conflict", fmt.Sprintf("%s recorded a conflict for %s (event %s) at %s: order %d had no repeat with another amount", c, key, id, at(t), n)})
		case !e.deliveredBy(c, n, id, by) || !e.deliveredBy("", n, orig, by) || !e.deliveredBy("", n, conflict, by):
			*out = append(*out, finding{n, "invented-conflict", fmt.Sprintf("%s recorded a conflict for %s (event %s) at %s, before both events of that key had been delivered", c, key, id, at(t))})
		}
	}
	return rows.Err()
}

// checkRelayEvidence: a SENT is a confirm the copy read, and every
// publish is of an event in the outbox.
func (r *Run) checkRelayEvidence(ctx context.Context, outbox string, copyOf map[string]string, at func(time.Time) string, out *[]finding) error {
	e := r.ev
	rows, err := r.server.QueryContext(ctx, "SELECT s.event_id, e.aggregate_id, s.at, s.who FROM "+outbox+".lab_status s JOIN "+outbox+
		".outbox_event e ON e.event_id=s.event_id WHERE s.new_status='SENT' ORDER BY s.seq")
	if err != nil {
		return fmt.Errorf("read the lab's audit %s.lab_status: %w", outbox, err)
	}
	for rows.Next() {
		var id, who string
		var n int64
		var sec float64
		if err := rows.Scan(&id, &n, &sec, &who); err != nil {
			rows.Close()
			return err
		}
		c, ours := copyOf[who]
		if !ours {
			continue
		}
		t := r.clock.lab(sec)
		if slices.ContainsFunc(e.confirmed[c][id], func(ct time.Time) bool { return !ct.After(t.Add(r.clock.tol)) }) {
			continue
		}
		why := "it never published it"
		if len(e.published[c][id]) > 0 {
			why = "it published it, and no confirm of that publish reached it (dropped, cut, or never asked for: confirm.select)"
		}
		*out = append(*out, finding{n, "sent-unconfirmed", fmt.Sprintf("%s marked %s SENT at %s with no confirm from the broker: %s", c, id, at(t), why)})
	}
	rows.Close()
	events := map[string]bool{}
	rows, err = r.server.QueryContext(ctx, "SELECT event_id FROM "+outbox+".outbox_event")
	if err != nil {
		return fmt.Errorf("read the events in %s.outbox_event: %w", outbox, err)
	}
	for rows.Next() {
		var id string
		if rows.Scan(&id) == nil {
			events[id] = true
		}
	}
	rows.Close()
	for c, ids := range e.published {
		for id, ts := range ids {
			if !events[id] {
				n, _ := OrderOf(id)
				*out = append(*out, finding{n, "no-event", fmt.Sprintf("%s published message %q at %s, which is no event of the outbox: publish each event under its event_id", c, orNone(id), at(ts[0]))})
			}
		}
	}
	return nil
}

// findingKinds name each kind of finding: as a violation, and as an
// explanation's verdict.
var findingKinds = map[string]struct{ violation, verdict string }{
	"forbidden":         {"forbidden: your program sent what the contract forbids, and its connection was closed", "forbidden"},
	"unearned":          {"unearned: effects with no delivery behind them (an effect must follow the message that carries it, to the copy that makes it)", "effect without a delivery"},
	"size":              {"size: effects of another size than their message's amount", "wrong amount"},
	"invented-conflict": {"conflict: conflict rows no delivery carried", "invented conflict"},
	"acked-unapplied":   {"acked: messages acked before the effect they stand for had committed", "acked before its effect"},
	"sent-unconfirmed":  {"sent: events marked SENT with no confirm of their publish", "SENT without a confirm"},
	"no-event":          {"published: messages that are no event of the outbox", "published no event"},
}

// evidenceViolations sums the findings up by kind, each with its first
// few as evidence.
func evidenceViolations(fs []finding) []string {
	var kinds []string
	by := map[string][]finding{}
	for _, f := range fs {
		if by[f.kind] == nil {
			kinds = append(kinds, f.kind)
		}
		by[f.kind] = append(by[f.kind], f)
	}
	var v []string
	for _, k := range kinds {
		var ex []string
		for _, f := range by[k][:min(maxFindings, len(by[k]))] {
			ex = append(ex, f.text)
		}
		v = append(v, fmt.Sprintf("%s — %d; %s", findingKinds[k].violation, len(by[k]), strings.Join(ex, "; ")))
	}
	return v
}

// effectQuery asks whether the effect an ack of message id (order n)
// stands for has committed: the event's own, where an order has events of
// its own effects (an order's version; a repeat with another amount,
// applied or recorded as a conflict), else any effect of the order (a
// redelivery, a republish or a re-send with the same amount changes
// nothing once the order's first is in).
func (r *Run) effectQuery(n int64, id string) (string, []any) {
	idem := r.names.Name(services.IdempotencyDB)
	switch {
	case r.O.Order:
		version := 1
		if strings.HasSuffix(id, "-paid") {
			version = 2
		}
		// The audit, not the row: another copy may have written an older
		// version over it since (a stale view, another violation).
		return "SELECT EXISTS(SELECT 1 FROM " + idem + ".lab_view WHERE order_id=? AND new_version >= ?)", []any{n, version}
	case r.O.Conflict > 0 && n%int64(r.O.Conflict) == 0:
		// Both events of the key carry their own effect: applied (its
		// amount) or recorded as the conflict.
		return "SELECT EXISTS(SELECT 1 FROM " + idem + ".lab_applied WHERE user_id=? AND delta=?) OR EXISTS(SELECT 1 FROM " + idem +
			".lab_conflict WHERE business_key=? AND event_id=?)", []any{n, amountOf(id), fmt.Sprintf("order:%d:paid", n), id}
	}
	return "SELECT EXISTS(SELECT 1 FROM " + idem + ".lab_applied WHERE user_id=?) OR EXISTS(SELECT 1 FROM " + idem +
		".lab_conflict WHERE business_key=?)", []any{n, fmt.Sprintf("order:%d:paid", n)}
}

// probeAck is called with each ack of a consumer of its own before the
// proxy forwards it: an ack says "done", so the effect it stands for
// (effectQuery) must be committed, and visible to another session, by now. The program sent
// the ack after its commit returned, or it did not; no clock is compared.
// An ack before the commit is caught whenever its commit had not finished
// by the time the lab looked (a commit waits for its log to reach disk),
// not only when a kill lands between the two.
func (r *Run) probeAck(copy, id string, t time.Time) {
	n, ok := OrderOf(id)
	if !ok || r.probe == nil {
		return
	}
	visible := false
	var q string
	var args []any
	if r.O.SMS {
		r.ev.mu.Lock()
		visible = slices.ContainsFunc(r.ev.sms, func(s smsSent) bool { return s.to == n })
		r.ev.mu.Unlock()
	} else {
		q, args = r.effectQuery(n, id)
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := r.probe.QueryRowContext(c, q, args...).Scan(&visible)
		cancel()
		if err != nil {
			return // the lab could not look: no evidence either way
		}
	}
	if !visible {
		r.ev.mu.Lock()
		r.ev.early = append(r.ev.early, ackSeen{copy, t, id, n, q, args})
		r.ev.mu.Unlock()
	}
}

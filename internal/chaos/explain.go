package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rmlab/lab/internal/services"
)

// Why explains one order that went wrong: what happened to it, in order,
// from the history (the proxies' wires, the workers' notes, the faults) and
// the lab's audit of MySQL, and the likely cause.
type Why struct {
	Order   int64    `json:"order"`
	Verdict string   `json:"verdict"` // applied twice, lost, stuck, conflict not recorded
	Because string   `json:"because"`
	Story   []string `json:"story"`
}

// Text is the explanation as a learner reads it.
func (w Why) Text() string {
	var b strings.Builder
	if w.Order == 0 { // of no order: a forbidden method
		fmt.Fprintf(&b, "%s: %s\n", w.Verdict, w.Because)
	} else {
		fmt.Fprintf(&b, "order %d — %s: %s\n", w.Order, w.Verdict, w.Because)
	}
	for _, l := range w.Story {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// maxWhy is how many orders of each verdict are explained.
const maxWhy = 3

type line struct {
	t    int64
	text string
}

// storyOf is what happened to order n, in time order, with the faults and
// exits of the processes that touched it while it did.
type storyOf struct {
	lines     []line
	procs     map[string]bool
	ids       []string // message ids seen, in order
	applied   int      // committed applications (audit)
	status    string   // the outbox status now (relay)
	noAck     map[string]bool
	acked     bool            // an ack reached the broker before the first application
	redelivd  bool            // a redelivery came after an application
	repub     int             // publishes of its event by the lab's relays
	resent    bool            // SENT, then set SENDING again
	delivered int             // deliveries to a consumer of its own
	smsKeys   map[string]bool // the Idempotency-Keys its SMS were sent under ("" for none)
	cutPub    bool            // a publish was cut before the broker got it
	sentAt    int64
}

func (r *Run) explain(ctx context.Context, s *Summary) []Why {
	var out []Why
	told := map[int64]bool{}
	add := func(orders []int64, verdict string) {
		n0 := len(out)
		for _, n := range orders {
			if len(out)-n0 == maxWhy {
				break
			}
			if told[n] {
				continue
			}
			told[n] = true
			st := r.story(ctx, n)
			out = append(out, Why{Order: n, Verdict: verdict, Because: r.because(verdict, st), Story: st.render()})
		}
	}
	add(s.TwiceOrders, "applied twice")
	add(s.LostOrders, "lost")
	add(s.ConflictMissOrders, "conflict not recorded")
	add(s.StaleOrders, "left stale")
	if s.Unsent > 0 {
		add(r.stuck(ctx), "never sent")
	}
	return out
}

func (st *storyOf) add(t int64, format string, args ...any) {
	st.lines = append(st.lines, line{t, fmt.Sprintf(format, args...)})
}

func (st *storyOf) render() []string {
	slices.SortStableFunc(st.lines, func(a, b line) int { return int(a.t - b.t) })
	var out []string
	for _, l := range st.lines {
		out = append(out, fmt.Sprintf("%7.2fs  %s", float64(l.t)/1000, l.text))
	}
	return out
}

func (r *Run) story(ctx context.Context, n int64) *storyOf {
	st := &storyOf{procs: map[string]bool{}, noAck: map[string]bool{}, sentAt: -1, smsKeys: map[string]bool{}}
	first, last := int64(-1), int64(0)
	firstApplied := int64(-1)
	audit := r.auditOf(ctx, n)
	for _, a := range audit {
		if a.applied != 0 && firstApplied < 0 {
			firstApplied = a.t
		}
	}
	for _, e := range r.Hist.Order(n) {
		if first < 0 {
			first = e.T
		}
		last = max(last, e.T)
		id := e.ID
		if !slices.Contains(st.ids, id) && e.Op != "committed" && e.Op != "applied" && e.Op != "duplicate" && e.Op != "sms" && e.Op != "sms-fault" {
			st.ids = append(st.ids, id)
		}
		cut := e.Detail == "cut"
		switch e.Op {
		case "committed":
			st.add(e.T, "committed by the producer (%s)", id)
		case "published":
			st.repub++
			st.add(e.T, "published by the lab's %s as %s", e.Proc, id)
		case "applied":
			st.add(e.T, "applied by the lab's %s (%s)", e.Proc, id)
		case "duplicate":
			st.add(e.T, "recognised as a duplicate by the lab's %s (%s)", e.Proc, id)
		case "publish":
			st.procs[e.Proc] = true
			switch {
			case cut:
				st.cutPub = true
				st.add(e.T, "%s published %s; the connection was cut before the broker got it", e.Proc, id)
			case e.Detail == "no confirm mode":
				st.add(e.T, "%s published %s (no confirm mode: it cannot know whether the broker got it)", e.Proc, orNone(id))
			default:
				st.add(e.T, "%s published %s", e.Proc, orNone(id))
			}
		case "confirm":
			if cut {
				st.add(e.T, "the broker confirmed %s, but the confirm was cut before %s read it", id, e.Proc)
			} else {
				st.add(e.T, "the broker confirmed %s to %s", id, e.Proc)
			}
		case "confirm-nack":
			st.add(e.T, "the broker refused %s (nack) to %s", id, e.Proc)
		case "deliver":
			st.procs[e.Proc] = true
			st.delivered++
			if e.Detail == "redelivered" {
				st.add(e.T, "redelivered to %s (%s)", e.Proc, id)
				if firstApplied >= 0 && e.T > firstApplied {
					st.redelivd = true
				}
			} else {
				st.add(e.T, "delivered to %s (%s)", e.Proc, id)
			}
		case "ack":
			if cut {
				st.add(e.T, "%s acked %s; the ack was cut before the broker got it", e.Proc, id)
			} else {
				st.add(e.T, "%s acked %s", e.Proc, id)
				if firstApplied < 0 || e.T < firstApplied {
					st.acked = true
				}
			}
		case "nack", "reject":
			st.add(e.T, "%s %sed %s", e.Proc, e.Op, id)
		case "sms-fault":
			st.add(e.T, "the SMS provider %s", e.Detail)
		case "sms":
			st.add(e.T, "the SMS provider: %s", e.Detail)
			if strings.HasPrefix(e.Detail, "sent") {
				_, key, _ := strings.Cut(e.Detail, ", key ")
				st.smsKeys[key] = true
			}
		}
	}
	for _, a := range audit {
		last = max(last, a.t)
		if first < 0 {
			first = a.t
		}
		switch {
		case a.applied != 0:
			st.applied++
			st.add(a.t, "applied: its account %+d, committed", a.applied)
		case a.to != "":
			st.add(a.t, "%s went %s → %s (committed)", a.event, a.from, a.to)
			if a.to == "SENT" && st.sentAt < 0 {
				st.sentAt = a.t
			}
			if a.from == "SENT" && a.to != "SENT" {
				st.resent = true
			}
		}
	}
	for _, e := range r.Hist.Procs() {
		if st.procs[e.Proc] && e.Op == "consume" && strings.Contains(e.Detail, "no-ack") {
			st.noAck[e.Proc] = true
		}
	}
	// The faults and exits of its processes while it was in flight, and
	// shortly after (a kill right after an ack is what loses a message).
	for _, f := range r.Hist.Timeline().Faults {
		at := f.T
		if f.Point != "" && f.Done > 0 {
			at = f.Done // it fired when the point came
		}
		if st.procs[f.Target] && at >= first && at <= last+1500 {
			if f.Point != "" {
				st.add(at, "fault %s at %s on %s: %s", f.Kind, f.Point, f.Target, f.Result)
			} else {
				st.add(at, "fault %s on %s: %s", f.Kind, f.Target, f.Result)
			}
		}
	}
	for _, e := range r.Hist.Procs() {
		if !st.procs[e.Proc] || e.T < first || e.T > last+1500 {
			continue
		}
		switch e.Op {
		case "start":
			st.add(e.T, "%s started again (%s)", e.Proc, e.Detail)
		case "exit":
			st.add(e.T, "%s ended: %s", e.Proc, e.Detail)
		}
	}
	if r.O.Own != nil && r.O.Own.Role == "relay" {
		st.status = r.statusOf(ctx, n)
	}
	return st
}

// because is the likely cause of what went wrong, from the shape of the
// story; the story itself is the evidence.
func (r *Run) because(verdict string, st *storyOf) string {
	role := r.O.Own.Role
	hasSuffix := func(sfx string) bool {
		for _, id := range st.ids {
			if strings.HasSuffix(id, sfx) {
				return true
			}
		}
		return false
	}
	switch {
	case verdict == "applied twice" && r.O.SMS && st.smsKeys[""]:
		return "an SMS went out without an Idempotency-Key, and another attempt (a redelivery, or a retry after a lost answer) sent one again: send every attempt for an order under one key, its business key, and the provider sends once"
	case verdict == "applied twice" && r.O.SMS:
		keys := make([]string, 0, len(st.smsKeys))
		for k := range st.smsKeys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return fmt.Sprintf("its SMS went out under %d keys (%s): the key must be the same for every attempt of one order — its business key, not the message id or a fresh one", len(keys), strings.Join(keys, ", "))
	case verdict == "lost" && r.O.SMS && st.acked:
		return "your consumer acked it before the provider had sent its SMS, and died or gave up in between: ack only once the provider answered"
	case verdict == "lost" && r.O.SMS:
		return "no SMS went out for it: a send that failed (a timeout, a 503) must be tried again, under the same key — the provider may have sent it already"
	case verdict == "applied twice" && role == "consumer" && hasSuffix("-conflict"):
		return "a repeat of its business key with another amount was applied too: compare a repeat with the operation you stored, record a conflict in consumed_conflict and apply nothing"
	case verdict == "applied twice" && role == "consumer" && hasSuffix("-resent"):
		return "the same business key came again under a new message id (a re-send) and was applied again: a mark keyed by the message id cannot see that; key it by the business key"
	case verdict == "applied twice" && role == "consumer" && st.repub > 1:
		return "the lab's relay published it again (a confirm it never got, or a claim that ran out), under the same message id, and your consumer applied both copies: remember each message you applied, in the transaction of its effect, and skip one already there"
	case verdict == "applied twice" && role == "consumer" && st.redelivd:
		return "your consumer applied it, the broker never got the ack, and the redelivery was applied again: record the operation in the same transaction as the effect and skip a delivery whose operation is already there"
	case verdict == "applied twice" && role == "consumer":
		return fmt.Sprintf("its effect committed %d times; a consumer must recognise a message it has already applied, whichever copy of it comes", st.applied)
	case verdict == "lost" && role == "consumer" && len(st.noAck) > 0:
		return "your consumer consumes with auto-ack (no-ack): the broker forgets each message as it sends it, so one in the consumer's hands when it dies is gone; ack after the commit"
	case verdict == "lost" && role == "consumer" && st.acked:
		return "your consumer acked it before its transaction committed, and it died in between: ack only after the commit"
	case verdict == "lost" && role == "consumer" && st.delivered == 0:
		return "it was never delivered to your consumer: did it consume from LAB_QUEUE, and did it stay up? Its last lines are below"
	case verdict == "lost" && role == "consumer":
		return "it was delivered but its effect never committed, and nothing delivered it again"
	case verdict == "left stale":
		return "an older event (version 1) was applied after the newer one — it came later, redelivered, republished or on the other copy — and overwrote it: apply an event only over an older version (UPDATE … WHERE order_id=? AND version < ?)"
	case verdict == "lost" && r.O.Order:
		return "no event of it was ever applied to order_view"
	case verdict == "conflict not recorded":
		return "one of its two events carried another amount under the same business key, and no row of that key is in consumed_conflict"
	case verdict == "lost" && role == "relay" && st.cutPub && st.sentAt >= 0:
		return "your relay published it, the broker never got it, and your relay marked it SENT anyway: mark it SENT only after the broker's confirm, and publish again when no confirm comes"
	case verdict == "lost" && role == "relay" && st.sentAt >= 0 && len(st.ids) == 0:
		return "your relay marked it SENT, but no publish of it ever reached the broker: a publish call that returns proves nothing without the broker's confirm; mark it SENT only after the confirm"
	case verdict == "lost" && role == "relay" && strings.Contains(st.status, "SENDING"):
		return "your relay claimed it (SENDING) and died before the broker had it, and nothing took the claim back: give a claim a lease (lease_token, locked_until) and let a relay take SENDING events whose lease has run out"
	case verdict == "lost" && role == "relay":
		return fmt.Sprintf("it was never applied; its outbox status is %s", orNone(st.status))
	case verdict == "applied twice" && role == "relay":
		var ids []string
		for _, id := range st.ids {
			if id != "" {
				ids = append(ids, id)
			}
		}
		if len(ids) > 1 {
			return fmt.Sprintf("your relay published it under %d message ids (%s): a republish must carry the event id as its message id, or no consumer can tell it is the same event", len(ids), strings.Join(ids, ", "))
		}
		return "it was published more than once and applied more than once: is the message id the event id?"
	case verdict == "never sent" && st.resent:
		return "it was SENT, then a copy of your relay set it SENDING again: two relays took the same event with nothing to keep them apart; claim it with a token of your own, under FOR UPDATE SKIP LOCKED, and mark only your own claim"
	case verdict == "never sent":
		return fmt.Sprintf("it is still %s after the drain: a relay claimed it and died or stalled, and nothing takes a claim back once its lease has run out", orNone(st.status))
	}
	return ""
}

type auditRow struct {
	t        int64
	applied  int64  // points added
	event    string // status change of an event
	from, to string
}

// auditOf reads the lab's audit (sql/chaos) of order n, in ms since the
// schedule started.
func (r *Run) auditOf(ctx context.Context, n int64) []auditRow {
	// The audit's times are the database server's clock; the history's
	// the lab's.
	start := float64(r.Hist.Start().Add(-r.clock.offset).UnixMicro()) / 1e3
	var out []auditRow
	idem, outbox := r.names.Name(services.IdempotencyDB), r.names.Name(services.OutboxDB)
	if r.O.Order {
		rows, err := r.server.QueryContext(ctx, "SELECT at*1000, old_status, old_version, new_status, new_version FROM "+idem+
			".lab_view WHERE order_id=? ORDER BY seq", n)
		if err != nil {
			return nil
		}
		defer rows.Close()
		for rows.Next() {
			var a auditRow
			var at float64
			var ov, nv int
			if rows.Scan(&at, &a.from, &ov, &a.to, &nv) == nil {
				a.t, a.event = int64(at-start), "order_view"
				a.from, a.to = fmt.Sprintf("%s v%d", a.from, ov), fmt.Sprintf("%s v%d", a.to, nv)
				out = append(out, a)
			}
		}
		return out
	}
	if r.O.Own.Role == "consumer" {
		rows, err := r.server.QueryContext(ctx, "SELECT at*1000, delta FROM "+idem+".lab_applied WHERE user_id=? ORDER BY seq", n)
		if err != nil {
			return nil
		}
		defer rows.Close()
		for rows.Next() {
			var a auditRow
			var at float64
			if rows.Scan(&at, &a.applied) == nil {
				a.t = int64(at - start)
				out = append(out, a)
			}
		}
		return out
	}
	rows, err := r.server.QueryContext(ctx, "SELECT s.at*1000, s.event_id, s.old_status, s.new_status FROM "+outbox+
		".lab_status s JOIN "+outbox+".outbox_event e ON e.event_id=s.event_id WHERE e.aggregate_id=? ORDER BY s.seq", n)
	if err != nil {
		return nil
	}
	defer rows.Close()
	for rows.Next() {
		var a auditRow
		var at float64
		if rows.Scan(&at, &a.event, &a.from, &a.to) == nil {
			a.t = int64(at - start)
			out = append(out, a)
		}
	}
	return out
}

func (r *Run) statusOf(ctx context.Context, n int64) string {
	var s string
	r.server.QueryRowContext(ctx, "SELECT GROUP_CONCAT(status) FROM "+r.names.Name(services.OutboxDB)+".outbox_event WHERE aggregate_id=?", n).Scan(&s)
	return s
}

// stuck is the first orders whose events are still NEW or SENDING.
func (r *Run) stuck(ctx context.Context) []int64 {
	rows, err := r.server.QueryContext(ctx, "SELECT DISTINCT aggregate_id FROM "+r.names.Name(services.OutboxDB)+
		".outbox_event WHERE status IN ('NEW','SENDING') ORDER BY aggregate_id LIMIT ?", maxWhy)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var n int64
		if rows.Scan(&n) == nil {
			out = append(out, n)
		}
	}
	return out
}

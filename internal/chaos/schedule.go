package chaos

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Named points the scheduler kills or pauses at (each program's points
// that its pipeline reaches on every message; a kill armed at a point that
// is not reached within a few seconds falls back to a random moment, and
// the history says so).
var (
	relayPoints    = []string{"claim-locked", "after-claim", "after-publish", "after-confirm", "after-mark"}
	consumerPoints = []string{"received", "after-mark", "after-update", "before-commit", "after-commit", "before-ack", "after-ack"}
	producerPoints = []string{"before-commit", "after-commit"}
	pausePoints    = []string{"after-claim", "after-publish", "after-confirm"}

	// A program of its own has no named points; its proxy gives it these:
	// "ack" cuts its next ack before the broker gets it and kills it (it
	// committed, the broker redelivers), "after-ack" lets the ack through
	// and stops it at once (an ack before the commit loses the message),
	// "publish" cuts its next publish before the broker gets it and kills
	// it (its claim is taken, the event is not out), "confirm" cuts the
	// broker's next confirm before the relay reads it and kills it. A pause
	// freezes it (SIGSTOP) at a random moment.
	ownConsumerPoints = []string{"ack", "after-ack"}
	ownRelayPoints    = []string{"publish", "publish", "confirm"}
	ownPausePoints    = []string{""}
)

// Schedule is the fault schedule for o: a pure function of the seed and
// the options (never of time or of what the processes did), so the same
// seed plans the same faults. Faults come about every o.Every (±50 %), from
// o.Every/2 until the schedule ends, each of a kind drawn from o.Faults.
func Schedule(o Options) []Fault {
	o.Defaults()
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	kinds := slices.Clone(o.Faults)
	cPoints, rPoints, pPoints := consumerPoints, relayPoints, pausePoints
	if o.Own != nil && o.Own.Role == "consumer" {
		cPoints = ownConsumerPoints
	}
	if o.Own != nil && o.Own.Role == "relay" {
		rPoints, pPoints = ownRelayPoints, ownPausePoints
	}
	// A program of its own is judged on one run: first the faults its
	// role cannot survive unless it is right (mustFaults), then one of
	// every other kind, in an order the seed draws, before the draws are
	// free, so that no seed spares a program the one fault it would fail.
	var cover []Fault
	if o.Own != nil {
		cover = mustFaults(o)
		for _, k := range kinds {
			if !slices.ContainsFunc(cover, func(f Fault) bool { return f.Kind == k }) {
				cover = append(cover, Fault{Kind: k})
			}
		}
		rng.Shuffle(len(cover), func(i, j int) { cover[i], cover[j] = cover[j], cover[i] })
	}
	var out []Fault
	at := o.Every / 2
	for at < o.Duration && len(kinds) > 0 {
		f := Fault{At: at.Round(time.Millisecond), Kind: kinds[rng.IntN(len(kinds))]}
		covering := len(cover) > 0
		if covering {
			f.Kind, f.Point, f.Target, f.Must = cover[0].Kind, cover[0].Point, cover[0].Target, cover[0].Must
			cover = cover[1:]
		}
		f.AtMS = f.At.Milliseconds()
		relay := func() string { return name("relay", 1+rng.IntN(o.Relays)) }
		consumer := func() string { return name("consumer", 1+rng.IntN(o.Consumers)) }
		// One kill in three is at a random moment, the others at a named point.
		pointOf := func(pts []string) string {
			if rng.IntN(3) == 0 {
				return ""
			}
			return pts[rng.IntN(len(pts))]
		}
		switch {
		case f.Must && (f.Kind == KillRelay || f.Kind == PauseRelay):
			f.Target = relay()
		case f.Must && f.Kind == KillConsumer:
			f.Target = consumer()
		case f.Must:
			// cut-amqp and drop-confirm name the role; their copy is
			// picked when they are injected.
		case f.Kind == KillRelay:
			f.Target, f.Point = relay(), pointOf(rPoints)
		case f.Kind == KillConsumer:
			f.Target, f.Point = consumer(), pointOf(cPoints)
		case f.Kind == KillProducer:
			f.Target, f.Point = "producer", pointOf(producerPoints)
		case f.Kind == DropConfirm:
			f.Target = "relays"
		case f.Kind == CutAMQP:
			// The proxy cuts whichever connection sends the next frame of
			// the kind: a relay's publish or a consumer's ack.
			f.Target = []string{"relays", "consumers"}[rng.IntN(2)]
		case f.Kind == PauseRelay:
			f.Target, f.Point = relay(), pPoints[rng.IntN(len(pPoints))]
		case f.Kind == RestartBroker:
			f.Target = "broker"
		case f.Kind == CutMySQL:
			f.Target = []string{"outbox", "idempotency"}[rng.IntN(2)]
		case f.Kind == SMSTimeout, f.Kind == SMSError:
			f.Target = "provider"
		}
		out = append(out, f)
		if covering {
			// The cover comes closer together, so that it fits in a short
			// schedule.
			at += o.Every/2 + time.Duration(rng.Int64N(int64(o.Every/2)))
		} else {
			at += o.Every/2 + time.Duration(rng.Int64N(int64(o.Every)))
		}
	}
	return out
}

// mustFaults are the faults a program of its own in o's role cannot
// survive unless it is right, each at the point where it hurts, among
// o.Faults: a consumer killed with its ack cut after its commit (an
// effect without a mark repeats), killed right after its ack reached the
// broker (an ack before the commit loses), its connection cut at an ack; a
// relay killed at its publish and at the broker's confirm, a confirm
// dropped, its connection cut at a publish, frozen past its lease.
func mustFaults(o Options) []Fault {
	var want []Fault
	if o.Own.Role == "consumer" {
		want = []Fault{{Kind: KillConsumer, Point: "ack"}, {Kind: KillConsumer, Point: "after-ack"}, {Kind: CutAMQP, Target: "consumers"}}
	} else {
		want = []Fault{{Kind: KillRelay, Point: "publish"}, {Kind: KillRelay, Point: "confirm"}, {Kind: DropConfirm, Target: "relays"},
			{Kind: CutAMQP, Target: "relays"}, {Kind: PauseRelay}}
	}
	var out []Fault
	for _, f := range want {
		if slices.Contains(o.Faults, f.Kind) {
			f.Must = true
			out = append(out, f)
		}
	}
	return out
}

func name(kind string, i int) string { return fmt.Sprintf("%s-%d", kind, i) }

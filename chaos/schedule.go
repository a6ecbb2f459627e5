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
	// A program of its own is judged on one run: every kind comes once, in
	// an order the seed draws, before the draws are free, so that no seed
	// spares a program the one fault it cannot survive.
	var cover []FaultKind
	if o.Own != nil {
		cover = slices.Clone(kinds)
		rng.Shuffle(len(cover), func(i, j int) { cover[i], cover[j] = cover[j], cover[i] })
	}
	var out []Fault
	at := o.Every / 2
	for at < o.Duration && len(kinds) > 0 {
		f := Fault{At: at.Round(time.Millisecond), Kind: kinds[rng.IntN(len(kinds))]}
		if len(cover) > 0 {
			f.Kind, cover = cover[0], cover[1:]
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
		switch f.Kind {
		case KillRelay:
			f.Target, f.Point = relay(), pointOf(rPoints)
		case KillConsumer:
			f.Target, f.Point = consumer(), pointOf(cPoints)
		case KillProducer:
			f.Target, f.Point = "producer", pointOf(producerPoints)
		case DropConfirm:
			f.Target = "relays"
		case CutAMQP:
			// The proxy cuts whichever connection sends the next frame of
			// the kind: a relay's publish or a consumer's ack.
			f.Target = []string{"relays", "consumers"}[rng.IntN(2)]
		case PauseRelay:
			f.Target, f.Point = relay(), pPoints[rng.IntN(len(pPoints))]
		case RestartBroker:
			f.Target = "broker"
		case CutMySQL:
			f.Target = []string{"outbox", "idempotency"}[rng.IntN(2)]
		case SMSTimeout, SMSError:
			f.Target = "provider"
		}
		out = append(out, f)
		at += o.Every/2 + time.Duration(rng.Int64N(int64(o.Every)))
	}
	return out
}

func name(kind string, i int) string { return fmt.Sprintf("%s-%d", kind, i) }

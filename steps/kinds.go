package steps

import "sort"

// kinds is the step vocabulary, every kind in one table: a lesson's fence
// names one of these. A name written twice is a compile error (duplicate
// key in a map literal), not a kind silently replaced at init.
var kinds = map[string]Kind{
	// SQL and Redis
	"reset": resetKind{},
	"sql":   sqlKind{},
	"await": awaitKind{},
	"redis": redisKind{},
	"show":  showKind{},
	// worker processes
	"spawn":  spawnKind{},
	"wait":   waitKind{},
	"kill":   killKind{},
	"resume": resumeKind{},
	"stop":   stopKind{},
	"http":   httpKind{},
	// AMQP
	"declare":        declareKind{},
	"publish":        publishKind{},
	"consume":        consumeKind{},
	"ack":            ackKind{"ack"},
	"nack":           ackKind{"nack"},
	"reject":         ackKind{"reject"},
	"close":          closeKind{},
	"queues":         queuesKind{},
	"proxy":          proxyKind{},
	"broker-restart": restartKind{},
	"nodes":          nodesKind{},
	"chaos":          chaosKind{},
	"challenge":      challengeKind{},
	// the learner's turn and the checks
	"choice":  choiceKind{},
	"server":  serverKind{},
	"predict": predictKind{},
	"sleep":   sleepKind{},
	"expect":  expectKind{},
	"ledger":  ledgerKind{},
}

// Lookup finds a kind by the first word of a fence's info string.
func Lookup(name string) (Kind, bool) {
	k, ok := kinds[name]
	return k, ok
}

// KindNames lists the kinds, sorted.
func KindNames() []string {
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

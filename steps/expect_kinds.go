package steps

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The truth table expect and lab check share: what each step kind's outcome
// carries, and so which verbs can read it. A verb on a kind that does not
// fill what it reads cannot be evaluated: read as a zero value, "affected
// 0" after a publish, "rows 0" after a declare and "not waiting" after a
// worker would all pass whatever happened.

// carries is a set of the parts of an outcome verbs read.
type carries uint8

const (
	status   carries = 1 << iota // succeeded, or failed with a code: ok, error
	affected                     // the rows a statement changed: affected
	table                        // result rows: rows, value, row
	session                      // a SQL session that can block: waiting, elapsed
	shown                        // the step's text as shown: contains
)

// shape is what one kind's outcome carries and the facts it reports.
type shape struct {
	carries carries
	facts   []string
}

var (
	workerShape = shape{table | shown, []string{"state", "point", "exit", "pid"}}
	sqlShape    = shape{status | affected | table | session | shown, nil}
	settleShape = shape{status | shown, []string{"settled", "tags", "queue", "delivered", "redelivered"}}
	shapes      = map[string]shape{
		"sql":   sqlShape,
		"await": sqlShape,
		"redis": {status | table | shown, nil},
		"spawn": workerShape, "wait": workerShape, "kill": workerShape, "stop": workerShape, "resume": workerShape,
		"publish":        {status | shown, []string{"confirm", "seq", "id", "queue", "returned"}},
		"declare":        {status | shown, []string{"queue"}},
		"consume":        {status | table | shown, []string{"queue", "delivered", "redelivered", "tags"}},
		"ack":            settleShape,
		"nack":           settleShape,
		"reject":         settleShape,
		"close":          {shown, []string{"requeued"}},
		"queues":         {table | shown, []string{"queue", "exists", "down", "ready", "unacked", "consumers"}},
		"proxy":          {table | shown, []string{"publishes", "dropped-confirms"}},
		"broker-restart": {table | shown, []string{"restarted"}},
		"chaos":          {table | shown, []string{"committed", "once", "lost", "twice", "absorbed", "unsent", "dead", "faults", "verdict"}},
		"http":           {table | shown, []string{"status", "replayed"}},
	}
	// sourceKinds maps an outcome's source (of="sql B", "worker c1") to the
	// kind whose shape it has.
	sourceKinds = map[string]string{"sql": "sql", "worker": "wait", "publish": "publish", "consume": "consume",
		"channel": "consume", "ack": "ack", "nack": "nack", "reject": "reject", "queue": "queues", "proxy": "proxy",
		"broker-restart": "broker-restart", "chaos": "chaos", "redis": "redis", "http": "http",
		"declare": "declare", "close": "close"}
	// needs is what each verb of the core reads; the broker verbs read named
	// facts (verbFacts) or the broker itself.
	needs = map[string]carries{"ok": status, "error": status, "affected": affected, "rows": table,
		"value": table, "row": table, "waiting": session, "elapsed": session, "contains": shown}
	// verbKinds are the verbs only some kinds' outcomes answer.
	verbKinds = map[string][]string{"confirm": {"publish"}, "returned": {"publish"},
		"delivered": {"consume"}, "redelivered": {"consume"}, "header": {"consume"},
		"tags": {"consume", "ack", "nack", "reject"}}
	verbWhat = map[string]string{"ok": "whether it succeeded", "error": "the error it ended with",
		"affected": "the rows a statement changed", "rows": "result rows", "value": "result rows", "row": "result rows",
		"waiting": "a SQL session that can block", "elapsed": "how long a SQL statement took", "contains": "the step's text"}
)

// OutcomeKind is the step kind whose shape an outcome of source has
// (of="sql B" → sql), or "" for a source no kind makes.
func OutcomeKind(source string) string {
	first, _, _ := strings.Cut(source, " ")
	return sourceKinds[first]
}

// Leaves reports whether steps of kind leave an outcome for expect.
func Leaves(kind string) bool {
	_, ok := shapes[kind]
	return ok
}

// Fits says whether verb (with its argument) can read what a step of kind
// leaves, and if not, what would: the check lab check runs at load and
// expect runs again on the outcome it has.
func Fits(verb, arg, kind string) error {
	what, err := fits(verb, arg, kind)
	if what != "" {
		return fmt.Errorf("%s reads %s, which a %s step does not report; after %s, check %s", verb, what, kind, kind, strings.Join(fitting(kind), ", "))
	}
	return err
}

// fits returns what verb reads when a step of kind does not report it at
// all, or an error about the argument.
func fits(verb, arg, kind string) (string, error) {
	sh, ok := shapes[kind]
	if !ok {
		return "", nil // a kind this table does not know: the verb decides
	}
	bad := func(what string) (string, error) { return what, nil }
	if need, ok := needs[verb]; ok {
		if sh.carries&need == 0 {
			return bad(verbWhat[verb])
		}
		return "", nil
	}
	if ks, ok := verbKinds[verb]; ok && !slices.Contains(ks, kind) {
		return bad("what a " + strings.Join(ks, " or ") + " step reports")
	}
	switch verb {
	case "fact":
		key, _, _ := strings.Cut(strings.TrimSpace(arg), " ")
		if len(sh.facts) == 0 {
			return bad("facts")
		}
		if !slices.Contains(sh.facts, key) && !strings.HasPrefix(key, "${") {
			return "", fmt.Errorf("a %s step reports no fact %q%s; its facts are %s", kind, key, Suggest(key, sh.facts), strings.Join(sh.facts, ", "))
		}
	case "ready", "unacked", "consumers":
		// "ready orders 2" reads the broker after any step; "ready 2" the
		// queue of the step checked.
		if len(strings.Fields(arg)) == 1 && !slices.Contains(sh.facts, "queue") {
			return "", fmt.Errorf("a %s step names no queue: write %s QUEUE N", kind, verb)
		}
	}
	return "", nil
}

// fitting lists the verbs that read what a step of kind leaves.
func fitting(kind string) []string {
	var out []string
	for _, v := range VerbNames() {
		if v == "fact" {
			if sh := shapes[kind]; len(sh.facts) > 0 {
				out = append(out, "fact "+strings.Join(sh.facts, "|"))
			}
			continue
		}
		arg := ""
		if v == "ready" || v == "unacked" || v == "consumers" {
			arg = "q 1"
		}
		if what, err := fits(v, arg, kind); what == "" && err == nil {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

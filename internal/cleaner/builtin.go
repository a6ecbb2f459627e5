package cleaner

import (
	_ "embed"
	"strings"
)

// builtinNames is what the built-in lessons declare or reset, one
// "queue NAME" or "exchange NAME" a line. The cleaner reads no lesson: the
// lessons' loader writes this list and a test of package labs fails when it
// is stale (go test ./labs -run TestTheCleanersListOfBuiltInNamesIsCurrent
// -update rewrites it).
//
//go:embed builtin_names.txt
var builtinNames string

// BuiltinFile is builtin_names.txt's path from the module's root.
const BuiltinFile = "internal/cleaner/builtin_names.txt"

// Builtin are the queues and exchanges (article names) the built-in lessons
// declare or reset, in both languages: what a cleaner given no lessons
// folder looks for.
func Builtin() Names {
	var n Names
	for _, l := range strings.Split(builtinNames, "\n") {
		switch kind, name, _ := strings.Cut(strings.TrimSpace(l), " "); kind {
		case "queue":
			n.Queues = append(n.Queues, name)
		case "exchange":
			n.Exchanges = append(n.Exchanges, name)
		}
	}
	return n
}

// FormatBuiltin is names as builtin_names.txt holds them.
func FormatBuiltin(n Names) string {
	var b strings.Builder
	b.WriteString("# The queues and exchanges the built-in lessons declare or reset: written by\n# go test ./labs -run TestTheCleanersListOfBuiltInNamesIsCurrent -update\n")
	for _, q := range n.Queues {
		b.WriteString("queue " + q + "\n")
	}
	for _, x := range n.Exchanges {
		b.WriteString("exchange " + x + "\n")
	}
	return b.String()
}

package programs

import (
	"context"
	"errors"
	"regexp"
	"sync"

	"github.com/rmlab/lab/internal/worker"
)

var (
	flagsOnce sync.Once
	flagsOf   map[string][]string
	flagLine  = regexp.MustCompile(`(?m)^\s+--([a-z][a-z0-9-]*)\s`)
)

// Flags are the flags program kind parses (without --name and --pause-at,
// which the worker layer takes), read from its own --help: the one flag set
// it has, so lab check never keeps a second list that could drift.
func Flags(kind string) ([]string, bool) {
	flagsOnce.Do(func() {
		flagsOf = map[string][]string{}
		for _, p := range All {
			// Every Main parses its flags before it touches a service or
			// its points, and answers --help with them.
			err := p.Main(context.Background(), nil, []string{"--help"})
			var h *worker.HelpError
			if !errors.As(err, &h) {
				continue
			}
			for _, m := range flagLine.FindAllStringSubmatch(h.Usage, -1) {
				flagsOf[p.Kind] = append(flagsOf[p.Kind], m[1])
			}
		}
	})
	f, ok := flagsOf[kind]
	return f, ok
}

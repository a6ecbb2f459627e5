// Command lab-worker runs the lessons' worker processes, as `lab worker
// KIND` does, from a binary without the screen: it starts in about a third
// of the CPU time. The lab uses it when it lies beside the lab binary and
// comes from the same build (worker.Beside); `go install ./cmd/...` installs
// both.
package main

import (
	"fmt"
	"os"

	"github.com/rmlab/lab/internal/programs"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "worker" {
		fmt.Fprintln(os.Stderr, "lab-worker runs only the lab's worker processes: lab-worker worker KIND [...] (the lab starts it; see lab worker KIND --help)")
		os.Exit(2)
	}
	os.Exit(programs.Run(os.Args[2:]))
}

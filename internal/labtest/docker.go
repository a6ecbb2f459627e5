package labtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/rmlab/lab/internal/containers"
)

// dockerTool is the engine DOCKER_HOST names (or the default socket).
// Without one a container test does not run and says so, unless
// LAB_REQUIRE_DOCKER=1 (CI's container part, on the engine .ci/docker
// starts) makes that a failure.
var dockerTool = Tool{
	Name: "a Docker engine",
	Probe: func() error {
		e, ok := containers.FromEnv()
		if ok && e.Answers(context.Background()) {
			return nil
		}
		return fmt.Errorf("none answers at %s", e.Socket)
	},
	Install: `bash .ci/docker up; eval "$(.ci/docker env)" (or set DOCKER_HOST to an engine of yours)`,
	Require: "LAB_REQUIRE_DOCKER",
}

// Docker is the engine DOCKER_HOST names; without one the test does not
// run (Needs).
func Docker(t testing.TB) containers.Engine {
	t.Helper()
	Needs(t, dockerTool)
	e, _ := containers.FromEnv()
	return e
}

package labtest

import (
	"context"
	"os"
	"testing"

	"github.com/rmlab/lab/internal/containers"
)

// Docker is the engine DOCKER_HOST names. Without one a container test
// skips, unless LAB_REQUIRE_DOCKER=1 (CI's container part, on the engine
// .ci/docker starts) makes that a failure.
func Docker(t testing.TB) containers.Engine {
	t.Helper()
	e, ok := containers.FromEnv()
	if ok && e.Answers(context.Background()) {
		return e
	}
	if os.Getenv("LAB_REQUIRE_DOCKER") == "1" {
		t.Fatalf("LAB_REQUIRE_DOCKER=1 and no Docker engine answers at %s (bash .ci/docker up; eval \"$(.ci/docker env)\")", e.Socket)
	}
	t.Skipf("no Docker engine answers at %s (LAB_REQUIRE_DOCKER=1 makes this a failure)", e.Socket)
	return e
}

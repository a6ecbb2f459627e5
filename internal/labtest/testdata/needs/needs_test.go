// Package needs is run by labtest's tests with go test, as the README's
// test command runs a package: one test needs a tool that is never here.
package needs

import (
	"errors"
	"testing"

	"github.com/rmlab/lab/internal/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m) }

var never = labtest.Tool{
	Name:    "the never-installed tool",
	Probe:   func() error { return errors.New("not on PATH") },
	Install: "apt-get install never",
	Require: "LABTEST_REQUIRE_NEVER",
}

func TestNeedsTheTool(t *testing.T) {
	labtest.Needs(t, never)
	t.Fatal("ran without the tool")
}

func TestNeedsNothing(t *testing.T) {}

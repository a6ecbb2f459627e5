package labtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// goTestNeeds runs testdata/needs as the README's test command runs a
// package (go test, no -v, output to a file as CI keeps it), with env.
func goTestNeeds(t *testing.T, env ...string) (string, error) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command("go", "test", "-count=1", "./testdata/needs")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), runErr
}

// A test whose tool is missing does not run, passes nothing, and says so in
// go test's output even though the package passed: which test, why, and
// the command that installs it.
func TestAMissingToolIsSaidInGoTestsOutputWithItsInstallCommand(t *testing.T) {
	out, err := goTestNeeds(t, "LABTEST_REQUIRE_NEVER=")
	if err != nil {
		t.Fatalf("go test of a package whose one test lacks its tool failed (%v):\n%s", err, out)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "labtest: NOT RUN") {
			line = l
		}
	}
	for _, want := range []string{"TestNeedsTheTool", "the never-installed tool", "not on PATH", "apt-get install never", "LABTEST_REQUIRE_NEVER=1"} {
		if !strings.Contains(line, want) {
			t.Errorf("the NOT RUN line does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(line, "TestNeedsNothing") {
		t.Errorf("the line names a test that ran:\n%s", out)
	}
}

// Where the variable requires the tool, its absence fails the test.
func TestARequiredToolThatIsMissingFailsTheTest(t *testing.T) {
	out, err := goTestNeeds(t, "LABTEST_REQUIRE_NEVER=1")
	if err == nil {
		t.Fatalf("go test passed with LABTEST_REQUIRE_NEVER=1 and the tool missing:\n%s", out)
	}
	if !strings.Contains(out, "--- FAIL: TestNeedsTheTool") || !strings.Contains(out, "apt-get install never") {
		t.Errorf("the failure does not name the test and the install command:\n%s", out)
	}
}

// A tool that is here lets the test run.
func TestAToolThatIsHereLetsTheTestRun(t *testing.T) {
	here := Tool{Name: "here", Probe: func() error { return nil }, Require: "LABTEST_REQUIRE_HERE"}
	ran := false
	t.Run("needs", func(t *testing.T) {
		Needs(t, here)
		ran = true
	})
	if !ran {
		t.Fatal("Needs skipped a test whose tool is here")
	}
}

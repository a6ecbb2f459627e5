package challenge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakePython is a python3 that imports pika and PyMySQL, or one that does
// not, as a shell script in a folder of its own.
func fakePython(t *testing.T, hasPika bool) string {
	t.Helper()
	body := "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'pika'\" >&2\nexit 1\n"
	if hasPika {
		body = "#!/bin/sh\necho '3.13.1 pika 1.3.2 PyMySQL 1.1.1'\n"
	}
	p := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDoctorSaysAPythonWithoutPikaCannotRunThePythonStartersAndHowToInstall(t *testing.T) {
	old := pythons
	t.Cleanup(func() { pythons = old })
	pythons = []string{fakePython(t, false), filepath.Join(t.TempDir(), "nothing-here")}
	p := pythonPrereq(context.Background())
	if p.OK {
		t.Fatalf("a python3 without pika was reported ready: %+v", p)
	}
	for _, want := range []string{"No module named 'pika'", "nothing-here: not found", "apt-get install python3-pika python3-pymysql", "pip install pika PyMySQL"} {
		if !strings.Contains(p.Detail, want) {
			t.Errorf("the detail does not say %q: %s", want, p.Detail)
		}
	}
}

func TestDoctorFindsAPythonThatImportsPikaAndPyMySQL(t *testing.T) {
	old := pythons
	t.Cleanup(func() { pythons = old })
	bad, good := fakePython(t, false), fakePython(t, true)
	pythons = []string{bad, good}
	p := pythonPrereq(context.Background())
	if !p.OK || !strings.Contains(p.Detail, good) || !strings.Contains(p.Detail, "pika 1.3.2") {
		t.Fatalf("the second python3, which imports both, was not found: %+v", p)
	}
}

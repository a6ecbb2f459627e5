package lab_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/rmlab/lab"

// layers is the design's import order, lowest first: a package imports
// packages of its own layer or a lower one, never a higher one. docs/layout.md
// says the same in words.
var layers = []struct {
	name     string
	packages []string // paths below the module; "x/..." is x and everything under it
}{
	{"foundation: the domain types and what needs no server", []string{
		".", "sql", "internal/secret", "internal/password", "internal/plain", "internal/progress", "internal/containers", "internal/catalog"}},
	{"servers: reaching, starting, cleaning and bounding them", []string{
		"internal/node", "internal/dbnode", "internal/services", "internal/broker", "internal/room",
		"internal/worker", "internal/amqpproxy", "internal/cleaner", "internal/labtest"}},
	{"programs: what a lesson starts as a worker process", []string{"internal/programs/..."}},
	{"pipelines: programs run together, under faults, and measured", []string{
		"internal/chaos", "challenge", "internal/bench"}},
	{"lessons: the step vocabulary and the loader", []string{"steps", "labs"}},
	{"runs: a lesson replayed, mutated or on the screen", []string{"internal/replay", "internal/mutation", "ui"}},
	{"serving: the workshop over SSH", []string{"internal/workshop"}},
	{"commands: flags and wiring", []string{"cmd/..."}},
}

// outside are the programs a learner writes or copies (starters, reference
// solutions, cheats): they meet the lab only through its contract, so they
// import nothing of it.
var outside = []string{"challenge/solutions/...", "challenge/starters/...", "challenge/testdata/..."}

// drivers are what the screen never imports: it reads tables and queues
// through the run.
var drivers = []string{"database/sql", "github.com/go-sql-driver/mysql", "github.com/rabbitmq/amqp091-go", "github.com/redis/go-redis/v9"}

type listed struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	// Incomplete: go list could not load the package or one it imports
	// (Error, DepsErrors say why); its imports are then partial, and a
	// check of them would pass what it never saw.
	Incomplete bool
	Error      *struct{ Err string }
	DepsErrors []struct{ Err string }
}

func match(pattern, rel string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == p || strings.HasPrefix(rel, p+"/")
	}
	return rel == pattern
}

// layerOf is rel's layer, -1 for outside, -2 for none.
func layerOf(rel string) int {
	for _, o := range outside {
		if match(o, rel) {
			return -1
		}
	}
	for i, l := range layers {
		for _, p := range l.packages {
			if match(p, rel) {
				return i
			}
		}
	}
	return -2
}

func rel(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// violations are the imports that break the layers, one line each.
func violations(pkgs []listed) []string {
	var out []string
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		lf := layerOf(from)
		if lf == -2 {
			out = append(out, fmt.Sprintf("%s is in no layer: add it to layers in layers_test.go", from))
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				to, own := rel(imp)
				if !own {
					if from == "ui" && !test && slices.Contains(drivers, imp) {
						out = append(out, fmt.Sprintf("ui imports the driver %s: read through the run", imp))
					}
					continue
				}
				lt := layerOf(to)
				switch {
				case lf == -1:
					out = append(out, fmt.Sprintf("%s (a learner's program) imports %s: it meets the lab only through the contract", from, to))
				case lt == -2:
					// reported as its own package
				case test && to == "internal/labtest":
					// every package's tests meet the servers through the harness
				case lt > lf:
					out = append(out, fmt.Sprintf("%s (%s) imports %s (%s), a higher layer", from, layers[lf].name, to, layers[lt].name))
				}
			}
		}
		check(p.Imports, false)
		check(append(p.TestImports, p.XTestImports...), true)
	}
	return out
}

func goList(t *testing.T) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Incomplete,Error,DepsErrors", "./...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Incomplete {
			why := "no reason given"
			if p.Error != nil {
				why = p.Error.Err
			} else if len(p.DepsErrors) > 0 {
				why = p.DepsErrors[0].Err
			}
			t.Errorf("go list could not load %s, so its imports are not all known: %s", p.ImportPath, why)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestNoImportPointsUpTheLayers lists the module's packages and their imports
// (tests' included) and fails on an import from a lower layer to a higher
// one, a package in no layer, a learner's program that imports the lab, and
// a driver imported by the screen.
func TestNoImportPointsUpTheLayers(t *testing.T) {
	pkgs := goList(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list found %d packages: the module has more", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// The check itself: each kind of violation is found.
func TestTheLayerCheckFindsEachKindOfViolation(t *testing.T) {
	for _, c := range []struct {
		name string
		pkg  listed
		want string
	}{
		{"upward", listed{ImportPath: module + "/internal/cleaner", Imports: []string{module + "/labs"}}, "a higher layer"},
		{"upward in a test", listed{ImportPath: module + "/internal/services", XTestImports: []string{module + "/steps"}}, "a higher layer"},
		{"no layer", listed{ImportPath: module + "/util"}, "in no layer"},
		{"a learner's program", listed{ImportPath: module + "/challenge/solutions/go/once", Imports: []string{module + "/internal/services"}}, "contract"},
		{"a driver in the screen", listed{ImportPath: module + "/ui", Imports: []string{"database/sql"}}, "driver"},
	} {
		if v := violations([]listed{c.pkg}); len(v) != 1 || !strings.Contains(v[0], c.want) {
			t.Errorf("%s: %v, want one violation saying %q", c.name, v, c.want)
		}
	}
	ok := listed{ImportPath: module + "/steps", Imports: []string{module + "/internal/chaos", module, "fmt"}, XTestImports: []string{module + "/internal/labtest"}}
	if v := violations([]listed{ok}); len(v) != 0 {
		t.Errorf("a downward import is refused: %v", v)
	}
}

package labtest

import (
	"github.com/rmlab/lab/internal/dbnode"

	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Tool is an outside program some tests need that the README's first lines
// (Go and the three services) do not install: a learner's Python, OpenSSH's
// client, a Docker engine, a MariaDB or MySQL server binary. Where it is
// missing such a test does not run and says so, once per tool, on a line
// of its own in go test's output, with the command that installs it; where
// Require is set to 1 (.ci/run sets every one) it fails instead. TESTING.md
// lists them.
type Tool struct {
	Name    string       // what is needed, as a sentence's object
	Probe   func() error // nil when it is here; else why not
	Install string       // the command that installs it
	Require string       // the variable that makes it required
}

// Python is Debian's python3 with pika and PyMySQL, what the challenges'
// Python starters and solutions run on (a python3 earlier on PATH, such as
// pyenv's, may lack them).
var Python = Tool{
	Name: "/usr/bin/python3 with pika and PyMySQL",
	Probe: func() error {
		out, err := exec.Command("/usr/bin/python3", "-c", "import pika, pymysql").CombinedOutput()
		if err != nil {
			return fmt.Errorf("/usr/bin/python3 -c 'import pika, pymysql': %s", lastLine(out, err))
		}
		return nil
	},
	Install: "apt-get install python3-pika python3-pymysql",
	Require: "LAB_REQUIRE_PYTHON",
}

// SSH is OpenSSH's client and ssh-keygen: a verdict through a real lab
// serve's door, as a participant's machine sends it.
var SSH = Tool{
	Name: "OpenSSH's ssh and ssh-keygen",
	Probe: func() error {
		for _, p := range []string{"ssh", "ssh-keygen"} {
			if _, err := exec.LookPath(p); err != nil {
				return err
			}
		}
		return nil
	},
	Install: "apt-get install openssh-client",
	Require: "LAB_REQUIRE_SSH",
}

// OwnMySQL is a MariaDB or MySQL server binary the lab can start a server
// of its own from: for a lesson reading a binary log the shared server does
// not write, and for every challenge run (its evidence out of the reach of
// the shared server's administrators).
var OwnMySQL = Tool{
	Name: "mariadbd or mysqld (with mariadb-install-db)",
	Probe: func() error {
		_, err := dbnode.Server()
		return err
	},
	Install: "apt-get install mariadb-server",
	Require: "LAB_REQUIRE_OWN_MYSQL",
}

// RedisServer is Redis's server binary: a Redis of a test's own, started
// as the test needs it (the shared one is never reconfigured).
var RedisServer = Tool{
	Name: "redis-server",
	Probe: func() error {
		_, err := exec.LookPath("redis-server")
		return err
	},
	Install: "apt-get install redis-server",
	Require: "LAB_REQUIRE_REDIS_SERVER",
}

func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return l
	}
	return err.Error()
}

// tools is what this process's tests found missing: the tests each
// tool kept from running, reported by Main.
var tools struct {
	mu      sync.Mutex
	order   []string
	missing map[string]*missingTool
}

type missingTool struct {
	tool  Tool
	why   string
	tests []string
}

// Needs runs the rest of t only where tool is here. Where it is missing, t
// fails if tool.Require is 1, and otherwise is skipped and counted for the
// line Main prints.
func Needs(t testing.TB, tool Tool) {
	t.Helper()
	err := probe(tool)
	if err == nil {
		return
	}
	msg := fmt.Sprintf("needs %s: %v; install it with: %s", tool.Name, err, tool.Install)
	if os.Getenv(tool.Require) == "1" {
		t.Fatalf("%s=1 and this test %s", tool.Require, msg)
	}
	tools.mu.Lock()
	if tools.missing == nil {
		tools.missing = map[string]*missingTool{}
	}
	m := tools.missing[tool.Name]
	if m == nil {
		m = &missingTool{tool: tool, why: err.Error()}
		tools.missing[tool.Name] = m
		tools.order = append(tools.order, tool.Name)
	}
	m.tests = append(m.tests, t.Name())
	tools.mu.Unlock()
	t.Skipf("did not run: %s (%s=1 makes this a failure)", msg, tool.Require)
}

// probed keeps each tool's answer: a probe may start a process.
var probed sync.Map // tool name -> error (or nil)

func probe(tool Tool) error {
	if v, ok := probed.Load(tool.Name); ok {
		err, _ := v.(error)
		return err
	}
	err := tool.Probe()
	probed.Store(tool.Name, err)
	return err
}

// notRun is Main's report: one line per missing tool, naming the tests it
// kept from running, why, and how to install it.
func notRun(pkg string) []string {
	tools.mu.Lock()
	defer tools.mu.Unlock()
	var out []string
	for _, name := range tools.order {
		m := tools.missing[name]
		tests := slices.Clone(m.tests)
		slices.Sort(tests)
		list := strings.Join(tests, ", ")
		out = append(out, fmt.Sprintf("labtest: NOT RUN in %s: %d test%s (%s): %s is missing (%s); install it with: %s (%s=1 makes them fail instead)",
			pkg, len(tests), plural(len(tests)), list, m.tool.Name, m.why, m.tool.Install, m.tool.Require))
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// reportNotRun prints notRun's lines where the reader of go test sees them.
// go test shows a passing package's output only with -v (or -json); without
// it the lines are written to the go command's own standard output (the
// terminal, or CI's log), through a copy of its descriptor that shares its
// offset, so the line lands between the go command's own lines and is never
// written over.
func reportNotRun(pkg string) {
	lines := notRun(pkg)
	if len(lines) == 0 {
		return
	}
	w := io.Writer(os.Stdout)
	if !testing.Verbose() {
		if f := goCommandStdout(); f != nil {
			defer f.Close()
			w = f
		}
	}
	for _, l := range lines {
		io.WriteString(w, l+"\n")
	}
}

// packageDir is the tested package's folder below the module's root
// (go test runs a test binary in its package's folder).
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "this package"
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil {
				return wd
			}
			return "./" + filepath.ToSlash(rel)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return wd
		}
		dir = up
	}
}

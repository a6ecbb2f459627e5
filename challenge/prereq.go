package challenge

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Prereq is what a language's starters need on the learner's machine, and
// whether this machine has it: what lab doctor reports for the challenges.
type Prereq struct {
	Language string
	OK       bool
	Detail   string // what was found, or what is missing and how to install it
}

// Prereqs checks each language the starters are written in: Go for the Go
// starters (go run), a python3 that imports pika and PyMySQL for the Python
// ones (python3 on PATH, else Debian's /usr/bin/python3).
func Prereqs(ctx context.Context) []Prereq {
	return []Prereq{goPrereq(ctx), pythonPrereq(ctx)}
}

func goPrereq(ctx context.Context) Prereq {
	p := Prereq{Language: "go"}
	out, err := probeCmd(ctx, "go", "version")
	if err != nil {
		p.Detail = "no go command on PATH (" + err.Error() + "): install Go 1.26 from https://go.dev/dl/ to run the Go starters"
		return p
	}
	p.OK, p.Detail = true, out
	return p
}

// pythons are the interpreters tried, in order: the learner's python3,
// then Debian's (where another one, such as pyenv's, comes first on PATH).
var pythons = []string{"python3", "/usr/bin/python3"}

func pythonPrereq(ctx context.Context) Prereq {
	p := Prereq{Language: "python"}
	var tried []string
	for _, py := range pythons {
		path, err := exec.LookPath(py)
		if err != nil {
			tried = append(tried, py+": not found")
			continue
		}
		if _, err := probeCmd(ctx, path, "-c", "import pika, pymysql"); err != nil {
			tried = append(tried, path+": "+err.Error())
			continue
		}
		v, _ := probeCmd(ctx, path, "-c", "import pika, pymysql, sys; print(sys.version.split()[0], 'pika', pika.__version__, 'PyMySQL', pymysql.__version__)")
		p.OK, p.Detail = true, fmt.Sprintf("%s: Python %s", path, v)
		return p
	}
	p.Detail = strings.Join(tried, "; ") + ": the Python starters need pika and PyMySQL: apt-get install python3-pika python3-pymysql (for /usr/bin/python3), or pip install pika PyMySQL"
	return p
}

// probeCmd runs a short command and gives its output's last line, or an
// error holding it.
func probeCmd(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if err != nil {
		if last == "" {
			return "", err
		}
		return "", fmt.Errorf("%s", last)
	}
	return last, nil
}

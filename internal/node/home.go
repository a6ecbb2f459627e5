package node

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A RabbitMQ node loads every application in its home's plugins folder
// while it boots, looking for configuration schemas, and then reads the
// attributes of every module of every loaded application, looking for
// feature flags and boot steps. With Debian's package (about 70
// applications, most of them plugins the lab never enables) that is about
// 10 of a RabbitMQ 3.10 node's 15 s boot on 2 cores. A node of the lab's
// boots from a home of its own instead: its plugins folder links only the
// applications `rabbit` needs (its .app dependencies, transitively), and
// RABBITMQ_SCRIPTS_DIR makes the server script take that folder as its
// home. Measured: 18 s → 6.6 s for a single node on RabbitMQ 3.10.8.

// homeEnv is the variable naming RabbitMQ's installed home (the folder
// with sbin/ and plugins/) where the server script alone does not tell:
// a wrapper that runs the real script in a chroot, as .ci/servers writes.
const homeEnv = "LAB_RABBITMQ_HOME"

// realHome finds the installed RabbitMQ home behind a server script: the
// parent of the folder the script really lives in (Debian's
// /usr/lib/rabbitmq/bin/rabbitmq-server links to
// ../lib/rabbitmq_server-V/sbin/rabbitmq-server), or LAB_RABBITMQ_HOME.
func realHome(server string) (string, bool) {
	if h := os.Getenv(homeEnv); h != "" {
		return h, isHome(h)
	}
	p, err := filepath.EvalSymlinks(server)
	if err != nil {
		return "", false
	}
	h := filepath.Dir(filepath.Dir(p))
	return h, isHome(h)
}

func isHome(h string) bool {
	for _, sub := range []string{"plugins", "sbin/rabbitmq-env", "sbin/rabbitmq-defaults"} {
		if _, err := os.Stat(filepath.Join(h, sub)); err != nil {
			return false
		}
	}
	return true
}

var (
	appNameRe = regexp.MustCompile(`^\s*\{\s*application\s*,\s*'?([a-z0-9_]+)'?`)
	appDepsRe = regexp.MustCompile(`\{\s*(?:included_)?applications\s*,\s*\[([^\]]*)\]`)
)

// slimHome builds dir/home: sbin/ linking the real scripts, plugins/
// linking the applications rabbit needs. Links are relative, so a home
// inside a chroot (LAB_NODES_DIR in the root) resolves the same inside it.
// It returns the scripts folder for RABBITMQ_SCRIPTS_DIR.
func slimHome(dir, server string) (string, error) {
	real, ok := realHome(server)
	if !ok {
		return "", fmt.Errorf("no RabbitMQ home (sbin/, plugins/) behind %s (set %s)", server, homeEnv)
	}
	apps, err := readApps(filepath.Join(real, "plugins"))
	if err != nil {
		return "", err
	}
	need := map[string]bool{}
	var walk func(string)
	walk = func(a string) {
		if need[a] {
			return
		}
		if _, ok := apps[a]; !ok {
			return // an Erlang/OTP application: on the VM's own path
		}
		need[a] = true
		for _, d := range apps[a].deps {
			walk(d)
		}
	}
	walk("rabbit")
	if !need["rabbit"] {
		return "", fmt.Errorf("no rabbit application in %s", filepath.Join(real, "plugins"))
	}
	home := filepath.Join(dir, "home")
	os.RemoveAll(home)
	for _, sub := range []string{"sbin", "plugins"} {
		if err := os.MkdirAll(filepath.Join(home, sub), 0o700); err != nil {
			return "", err
		}
	}
	scripts, err := os.ReadDir(filepath.Join(real, "sbin"))
	if err != nil {
		return "", err
	}
	for _, e := range scripts {
		if err := relLink(filepath.Join(real, "sbin", e.Name()), filepath.Join(home, "sbin", e.Name())); err != nil {
			return "", err
		}
	}
	for a := range need {
		if err := relLink(apps[a].dir, filepath.Join(home, "plugins", filepath.Base(apps[a].dir))); err != nil {
			return "", err
		}
	}
	return filepath.Join(home, "sbin"), nil
}

type app struct {
	dir  string
	deps []string
}

// readApps reads each application's name and dependencies from its
// ebin/NAME.app (an Erlang term; the two lists are all the lab needs).
func readApps(plugins string) (map[string]app, error) {
	entries, err := os.ReadDir(plugins)
	if err != nil {
		return nil, err
	}
	apps := map[string]app{}
	for _, e := range entries {
		dir := filepath.Join(plugins, e.Name())
		files, _ := filepath.Glob(filepath.Join(dir, "ebin", "*.app"))
		if len(files) != 1 {
			continue
		}
		data, err := os.ReadFile(files[0])
		if err != nil {
			continue
		}
		m := appNameRe.FindSubmatch(data)
		if m == nil {
			continue
		}
		a := app{dir: dir}
		for _, dm := range appDepsRe.FindAllSubmatch(data, -1) {
			for _, d := range strings.Split(string(dm[1]), ",") {
				if d = strings.Trim(strings.TrimSpace(d), "'"); d != "" {
					a.deps = append(a.deps, d)
				}
			}
		}
		apps[string(m[1])] = a
	}
	return apps, nil
}

func relLink(target, link string) error {
	rel, err := filepath.Rel(filepath.Dir(link), target)
	if err != nil {
		rel = target
	}
	return os.Symlink(rel, link)
}

package node

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fakeHome writes a RabbitMQ home whose plugins folder holds apps, each
// NAME → its dependencies.
func fakeHome(t *testing.T, apps map[string][]string) string {
	t.Helper()
	h := t.TempDir()
	for _, f := range []string{"sbin/rabbitmq-server", "sbin/rabbitmq-env", "sbin/rabbitmq-defaults"} {
		os.MkdirAll(filepath.Join(h, filepath.Dir(f)), 0o700)
		if err := os.WriteFile(filepath.Join(h, f), []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, deps := range apps {
		ebin := filepath.Join(h, "plugins", name+"-1.0", "ebin")
		os.MkdirAll(ebin, 0o700)
		list := ""
		for i, d := range deps {
			if i > 0 {
				list += ","
			}
			list += d
		}
		app := "{application, " + name + ",\n [{description, \"x\"},\n  {applications, [kernel,stdlib," + list + "]}]}.\n"
		if err := os.WriteFile(filepath.Join(ebin, name+".app"), []byte(app), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func linked(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, "home", "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestSlimHomeLinksRabbitAndWhatItNeedsTransitivelyAndNothingElse(t *testing.T) {
	h := fakeHome(t, map[string][]string{
		"rabbit":              {"ra", "rabbit_common"},
		"ra":                  {"gen_batch_server"},
		"gen_batch_server":    nil,
		"rabbit_common":       nil,
		"rabbitmq_mqtt":       {"rabbit"},
		"rabbitmq_management": {"rabbit", "cowboy"},
		"cowboy":              nil,
	})
	t.Setenv(homeEnv, h)
	dir := t.TempDir()
	scripts, err := slimHome(dir, "/nowhere/rabbitmq-server")
	if err != nil {
		t.Fatal(err)
	}
	got := linked(t, dir)
	want := []string{"gen_batch_server-1.0", "ra-1.0", "rabbit-1.0", "rabbit_common-1.0"}
	if !slices.Equal(got, want) {
		t.Fatalf("plugins linked: %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(scripts, "rabbitmq-defaults")); err != nil {
		t.Fatalf("the scripts folder lacks what rabbitmq-env sources: %v", err)
	}
	if filepath.Dir(scripts) != filepath.Join(dir, "home") {
		t.Fatalf("scripts %s: RABBITMQ_HOME is the scripts folder's parent, want %s", scripts, filepath.Join(dir, "home"))
	}
	// Links are relative: the home resolves the same inside a chroot.
	l, err := os.Readlink(filepath.Join(dir, "home", "plugins", "rabbit-1.0"))
	if err != nil || filepath.IsAbs(l) {
		t.Fatalf("link %q, %v: want a relative link", l, err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "home", "plugins", "rabbit-1.0", "ebin", "rabbit.app")); err != nil || fi.IsDir() {
		t.Fatalf("the link does not reach the application: %v", err)
	}
}

func TestSlimHomeRefusesAHomeWithoutRabbit(t *testing.T) {
	t.Setenv(homeEnv, fakeHome(t, map[string][]string{"ra": nil}))
	if _, err := slimHome(t.TempDir(), "/nowhere/rabbitmq-server"); err == nil {
		t.Fatal("a plugins folder without rabbit gave a home")
	}
	t.Setenv(homeEnv, t.TempDir())
	if _, err := slimHome(t.TempDir(), "/nowhere/rabbitmq-server"); err == nil {
		t.Fatal("an empty folder was taken for RabbitMQ's home")
	}
}

// The installed RabbitMQ (Debian's) is found from its server script, and
// its slim home leaves out the plugins no lab node enables.
func TestSlimHomeOfTheInstalledRabbitMQLeavesOutThePlugins(t *testing.T) {
	server, err := Server()
	if err != nil {
		// As labtest.NodeServer (which this package cannot import): a
		// missing server script fails unless own nodes are off on purpose.
		if v := os.Getenv("LAB_OWN_BROKER"); v == "off" || v == "0" || v == "false" {
			t.Skip(err)
		}
		t.Fatalf("%v (or LAB_OWN_BROKER=off to skip)", err)
	}
	if _, ok := realHome(server); !ok {
		t.Skipf("%s is not an installed RabbitMQ's script (a wrapper): LAB_RABBITMQ_HOME names the home", server)
	}
	dir := t.TempDir()
	if _, err := slimHome(dir, server); err != nil {
		t.Fatal(err)
	}
	got := linked(t, dir)
	has := func(prefix string) bool {
		return slices.ContainsFunc(got, func(n string) bool { return len(n) > len(prefix) && n[:len(prefix)+1] == prefix+"-" })
	}
	for _, a := range []string{"rabbit", "rabbit_common", "ra", "osiris", "rabbitmq_prelaunch"} {
		if !has(a) {
			t.Errorf("%s missing from %v", a, got)
		}
	}
	for _, a := range []string{"rabbitmq_management", "rabbitmq_mqtt", "rabbitmq_shovel"} {
		if has(a) {
			t.Errorf("%s linked, but no lab node enables it: %v", a, got)
		}
	}
}

// Ports for a node come from below the kernel's ephemeral range, where no
// outgoing connection takes one between the choice and the node's bind (a
// dist port taken so failed a boot with dist_port_already_used).
func TestFreePortsAreDistinctAndBelowTheEphemeralRange(t *testing.T) {
	ports, err := FreePorts(7)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p >= ephemeralLow() || p < 10000 {
			t.Errorf("port %d (ephemeral from %d; all %v)", p, ephemeralLow(), ports)
		}
		seen[p] = true
	}
	if !portTaken(fmt.Errorf("exited while booting: {dist_port_already_used,41503,not_erlang}")) || portTaken(fmt.Errorf("exited while booting: badarg")) {
		t.Error("portTaken misreads a boot failure")
	}
}

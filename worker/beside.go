package worker

import (
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"
)

// LightBinary is the worker-only binary's name (cmd/lab-worker).
const LightBinary = "lab-worker"

// Beside returns the binary to start worker processes with: lab-worker
// beside the lab binary when it comes from the same build (same module
// version and VCS revision, and, for a build of changed files, not older
// than the lab), else the lab itself. Both run the same code; lab-worker
// starts in about a third of the CPU time, which is what forty screens
// reaching a spawn step at once wait behind. A stale lab-worker left by an
// earlier install is never used: its flags or points may differ.
func Beside(lab string) string {
	light := filepath.Join(filepath.Dir(lab), LightBinary)
	if sameBuild(lab, light) {
		return light
	}
	return lab
}

func sameBuild(lab, light string) bool {
	li, err := os.Stat(light)
	if err != nil || !li.Mode().IsRegular() || li.Mode().Perm()&0o111 == 0 {
		return false
	}
	bi, err := buildinfo.ReadFile(light)
	if err != nil {
		return false
	}
	own, ok := debug.ReadBuildInfo()
	if ok && filepath.Clean(lab) != filepath.Clean(executable()) {
		own = nil // not this process's binary: read it too
	}
	if own == nil {
		if own, err = buildinfo.ReadFile(lab); err != nil {
			return false
		}
	}
	if bi.Main.Path != own.Main.Path || bi.Main.Version != own.Main.Version {
		return false
	}
	a, b := vcs(bi), vcs(own)
	if a["vcs.revision"] != b["vcs.revision"] || a["vcs.modified"] != b["vcs.modified"] {
		return false
	}
	if b["vcs.modified"] == "true" || b["vcs.revision"] == "" {
		// Built from changed files (or without VCS): the revision does not
		// tell builds apart, so lab-worker must be from the same build time.
		la, err := os.Stat(lab)
		if err != nil || li.ModTime().Before(la.ModTime().Add(-time.Minute)) {
			return false
		}
	}
	return true
}

func vcs(bi *debug.BuildInfo) map[string]string {
	m := map[string]string{}
	for _, s := range bi.Settings {
		m[s.Key] = s.Value
	}
	return m
}

func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

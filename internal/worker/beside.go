package worker

import (
	"debug/buildinfo"
	"fmt"
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
	light, _ := BesideWhy(lab)
	return light
}

// BesideWhy is Beside, with why a lab-worker beside lab is not used ("" when
// it is, or when there is none).
func BesideWhy(lab string) (string, string) {
	light := filepath.Join(filepath.Dir(lab), LightBinary)
	why := sameBuild(lab, light)
	if why == "" {
		return light, ""
	}
	if why == "none" {
		why = ""
	}
	return lab, why
}

// sameBuild is "" when light is lab's build, "none" when there is no
// lab-worker, else why it is another build.
func sameBuild(lab, light string) string {
	li, err := os.Stat(light)
	if err != nil {
		return "none"
	}
	if !li.Mode().IsRegular() || li.Mode().Perm()&0o111 == 0 {
		return light + " is not an executable file"
	}
	bi, err := buildinfo.ReadFile(light)
	if err != nil {
		return light + " is not a Go program's binary"
	}
	own, ok := debug.ReadBuildInfo()
	if ok && filepath.Clean(lab) != filepath.Clean(executable()) {
		own = nil // not this process's binary: read it too
	}
	if own == nil {
		if own, err = buildinfo.ReadFile(lab); err != nil {
			return "cannot read " + lab + "'s build"
		}
	}
	if bi.Main.Path != own.Main.Path || bi.Main.Version != own.Main.Version {
		return fmt.Sprintf("%s is %s %s, this lab %s %s", light, bi.Path, bi.Main.Version, own.Path, own.Main.Version)
	}
	a, b := vcs(bi), vcs(own)
	if a["vcs.revision"] != b["vcs.revision"] || a["vcs.modified"] != b["vcs.modified"] {
		return fmt.Sprintf("%s was built from revision %s, this lab from %s", light, short(a), short(b))
	}
	if b["vcs.modified"] == "true" || b["vcs.revision"] == "" {
		// Built from changed files (or without VCS): the revision does not
		// tell builds apart, so lab-worker must be from the same build time.
		la, err := os.Stat(lab)
		if err != nil || li.ModTime().Before(la.ModTime().Add(-time.Minute)) {
			return light + " is older than this lab, built from changed files"
		}
	}
	return ""
}

func short(v map[string]string) string {
	r := v["vcs.revision"]
	if len(r) > 12 {
		r = r[:12]
	}
	if r == "" {
		r = "(none)"
	}
	if v["vcs.modified"] == "true" {
		r += " with changes"
	}
	return r
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

package node

// Finding and removing what a lab that died left: its node folders and any
// process carrying a set's marker.

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sweep removes the sets under base whose owner has gone (its lock exists
// and is free), their processes included: what a lab killed before it could clean
// up left. It returns the folders removed.
func Sweep(base string) ([]string, error) {
	entries, err := os.ReadDir(base)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		dir := filepath.Join(base, e.Name())
		// A folder without a lock is not a set (a test's folder of sets, a
		// set whose owner has not yet claimed it): creating the lock here
		// would take it from its owner, and removing the folder would take
		// the files of every running set below it.
		f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // owned by a running lab
			continue
		}
		kill(dir)
		os.RemoveAll(dir)
		f.Close()
		removed = append(removed, dir)
	}
	return removed, nil
}

// Leftovers lists the processes carrying the marker of a set under base
// (there should be none once their labs have ended).
func Leftovers(base string) []int {
	var out []int
	for _, p := range procs() {
		if d, ok := p.marker(); ok && (d == base || strings.HasPrefix(d, base+string(filepath.Separator))) {
			out = append(out, p.pid)
		}
	}
	return out
}

// kill SIGKILLs every process marked with dir and waits (5 s at most)
// until they are gone: a killed process lingers a moment while the kernel
// tears it down, and whoever asked expects none left when kill returns.
func kill(dir string) {
	if dir == "" {
		return
	}
	var left []proc
	for _, p := range procs() {
		if d, ok := p.marker(); ok && d == dir {
			syscall.Kill(p.pid, syscall.SIGKILL)
			left = append(left, p)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); len(left) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		still := left[:0]
		for _, p := range left {
			if d, ok := p.marker(); ok && d == dir {
				still = append(still, p)
			}
		}
		left = still
	}
}

type proc struct{ pid int }

func procs() []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, proc{pid})
		}
	}
	return out
}

func (p proc) marker() (string, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
	if err != nil {
		return "", false
	}
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, markerEnv+"="); ok {
			return v, true
		}
	}
	return "", false
}

package labtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/rmlab/lab/internal/services"
)

// A test's namespace is
//
//	PREFIX + TAG + SLOT + NNN        e.g. tstepsa007
//
// PREFIX is LAB_TEST_NAMESPACE (default "t"), TAG the test package's name
// (letters only, shortened so the namespace stays within MaxNamespace),
// SLOT a letter this test process holds a lock on (two runs of the same
// package on one machine take different letters), NNN the test's number in
// this process, always three digits. A test's namespace is never a prefix
// of another test's, so everything whose namespace starts with it is that
// test's: its replay lanes (NS_r1), the workshop participants it names
// (Derived), the bench's NSbench. Everything of this process starts with
// PREFIX+TAG+SLOT followed by a digit.

// MaxNamespace is the longest namespace a test gets: five characters are
// left for what a test derives from it (bench's "bench", lanes' "_r25").
const MaxNamespace = 11

// PrefixEnv names the variable whose value starts every test namespace
// (keeps concurrent runs on different machines apart on shared servers).
const PrefixEnv = "LAB_TEST_NAMESPACE"

// DefaultPrefix starts every test namespace when PrefixEnv is unset.
const DefaultPrefix = "t"

var prefixRe = regexp.MustCompile(`^[a-z0-9_]{1,7}$`)

// prefix is LAB_TEST_NAMESPACE or the default, or why it cannot be used.
func prefix() (string, error) {
	p := os.Getenv(PrefixEnv)
	if p == "" {
		return DefaultPrefix, nil
	}
	if !prefixRe.MatchString(p) {
		return "", fmt.Errorf("labtest: %s=%q cannot start a namespace: use 1–7 lowercase letters, digits or _ (the test's package, a slot and a number follow it, within %d characters)", PrefixEnv, p, MaxNamespace)
	}
	return p, nil
}

// packageTag is the test package's name, letters only, at most n long:
// "steps" for github.com/rmlab/lab/steps, "lab" for cmd/lab.
func packageTag(n int) string {
	path := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		path = bi.Path // github.com/rmlab/lab/steps.test
	}
	if path == "" {
		path = filepath.Base(os.Args[0])
	}
	name := strings.TrimSuffix(path, ".test")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' && b.Len() < n {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// inFamily reports whether name (a database, queue, exchange or Redis key)
// belongs to a namespace that starts with ns: ns stands at the name's start
// or right after an '_' (orders_NS, blog_outbox_lab_NS_r1, lab_NS:key,
// NS:key, lab.created-by-reliable-messaging-lab.queue.orders_NS). With
// digit, the character after ns must be a digit (ns is a process's
// PREFIX+TAG+SLOT, followed by a test's number).
func inFamily(name, ns string, digit bool) bool {
	for from := 0; ; {
		i := strings.Index(name[from:], ns)
		if i < 0 {
			return false
		}
		i += from
		if i == 0 || name[i-1] == '_' {
			end := i + len(ns)
			if !digit || (end < len(name) && name[end] >= '0' && name[end] <= '9') {
				return true
			}
		}
		from = i + 1
	}
}

// namespaceIn is the namespace a family member's name carries: from ns's
// place to the first ':' (a Redis key) or the end. "" when it carries none.
func namespaceIn(name, ns string, digit bool) string {
	for from := 0; ; {
		i := strings.Index(name[from:], ns)
		if i < 0 {
			return ""
		}
		i += from
		if i == 0 || name[i-1] == '_' {
			end := i + len(ns)
			if !digit || (end < len(name) && name[end] >= '0' && name[end] <= '9') {
				rest := name[i:]
				if j := strings.IndexByte(rest, ':'); j >= 0 {
					rest = rest[:j]
				}
				if services.ValidNamespace(rest) || services.IsLaneNamespace(rest) {
					return rest
				}
				return ""
			}
		}
		from = i + 1
	}
}

// slot is this process's letter, held with flock on a file in lockDir
// while the process runs. The file says "clean" when the last process that
// held it finished its cleanup, anything else when it died first.
type slot struct {
	prefix string // PREFIX + TAG + letter
	file   *os.File
	dirty  bool // the last holder ended without cleaning up
}

// lockDir holds the slots' lock files of every test process on the machine.
func lockDir() string { return filepath.Join(os.TempDir(), "rmlab-labtest") }

// takeSlot locks the first free letter for base (PREFIX+TAG). It also
// locks every other slot of base that is free but says its last holder
// died (orphans): their namespaces are to be swept, whichever letter this
// process got, and then the orphans released.
func takeSlot(base string) (own *slot, orphans []*slot, err error) {
	dir := lockDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, nil, fmt.Errorf("labtest: the lock folder %s: %w", dir, err)
	}
	_ = os.Chmod(dir, 0o777|os.ModeSticky) // every user's tests share the servers
	for c := 'a'; c <= 'z'; c++ {
		p := base + string(c)
		path := filepath.Join(dir, p+".lock")
		flags := os.O_RDWR
		if own == nil {
			flags |= os.O_CREATE
		}
		f, err := os.OpenFile(path, flags, 0o666)
		if err != nil {
			continue // none, or another user's: the next letter
		}
		_ = f.Chmod(0o666)
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close() // a running test process holds it
			continue
		}
		b := make([]byte, 64)
		n, _ := f.ReadAt(b, 0)
		state := strings.TrimSpace(string(b[:n]))
		s := &slot{prefix: p, file: f, dirty: state != "" && state != "clean"}
		switch {
		case own == nil:
			own = s
			s.write(fmt.Sprintf("running pid %d", os.Getpid()))
		case s.dirty:
			orphans = append(orphans, s)
		default:
			f.Close()
		}
	}
	if own == nil {
		for _, o := range orphans {
			o.release(false)
		}
		return nil, nil, fmt.Errorf("labtest: every slot of %s in %s is held by a running test process (26 at once)", base, dir)
	}
	return own, orphans, nil
}

func (s *slot) write(state string) {
	_ = s.file.Truncate(0)
	_, _ = s.file.WriteAt([]byte(state+"\n"), 0)
	_ = s.file.Sync()
}

// release says the slot's namespaces are clean (or not) and unlocks it.
func (s *slot) release(clean bool) {
	if clean {
		s.write("clean")
	}
	s.file.Close() // closing drops the flock
}

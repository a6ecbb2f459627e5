package workshop

import (
	"crypto/subtle"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// Instructor is the SSH user name that opens the room (with a key from
// --instructor-keys, nothing else).
const Instructor = "instructor"

// guessInterval is how often a wrong password is answered, per address and
// per name: about five refusals a second, across all their connections. A
// right password is answered at once, whoever else guesses from its
// address, so a class behind one NAT address is never locked out.
const guessInterval = 200 * time.Millisecond

// logWindow is how long the log says one address's wrong guesses in one
// line: the first is told at once, the rest counted and told when the next
// window opens.
const logWindow = time.Minute

// auth answers the SSH handshake's questions. It decides only whether a
// credential may log in: who the session is (the instructor or not) is
// read from the key that authenticated, after the handshake (isInstructor).
// A public-key callback also runs for keys a client merely offers, without
// proving it holds them, so nothing it sees may decide anything else.
type auth struct {
	cfg *Config
	log func(format string, args ...any)

	mu     sync.Mutex
	next   map[string]time.Time // "ip ADDR" or "name NAME" → when its next refusal may be answered
	failed map[string]*failures // address → its wrong guesses in the current log window
}

// failures are one address's wrong guesses since the window began.
type failures struct {
	since time.Time
	n     int
	names map[string]bool
}

func newAuth(cfg *Config, log func(string, ...any)) *auth {
	return &auth{cfg: cfg, log: log, next: map[string]time.Time{}, failed: map[string]*failures{}}
}

// password checks the workshop password. A right one is let in at once; a
// wrong one is refused only in its turn (one per guessInterval per address
// and per name), which is what bounds how fast anyone can guess.
func (a *auth) password(ctx ssh.Context, pass string) bool {
	if a.cfg.Password != "" && subtle.ConstantTimeCompare([]byte(pass), []byte(a.cfg.Password)) == 1 {
		return true
	}
	ip, name := host(ctx.RemoteAddr()), safeName(ctx.User())
	wait := a.refusal(ip, name)
	select {
	case <-time.After(wait):
	case <-ctx.Done():
	}
	return false
}

// refusal reserves the next refusal of ip and of name, says how long to
// wait for it, and logs the guess: the first of a window at once, the
// rest as a count when the next window opens.
func (a *auth) refusal(ip, name string) time.Duration {
	a.mu.Lock()
	now := time.Now()
	wait := time.Duration(0)
	for _, k := range []string{"ip " + ip, "name " + name} {
		at := a.next[k]
		if at.Before(now) {
			at = now
		}
		a.next[k] = at.Add(guessInterval)
		wait = max(wait, at.Sub(now))
	}
	f := a.failed[ip]
	var summary string
	first := f == nil || now.Sub(f.since) > logWindow
	if first && f != nil && f.n > 1 {
		summary = fmt.Sprintf("refused %d more wrong passwords from %s in the %s from %s (names: %s)", f.n-1, ip, logWindow,
			f.since.UTC().Format(time.TimeOnly), names(f.names))
	}
	if first {
		f = &failures{since: now, names: map[string]bool{}}
		a.failed[ip] = f
	}
	f.n++
	if len(f.names) < 8 {
		f.names[name] = true
	}
	a.prune(now)
	a.mu.Unlock()
	if summary != "" {
		a.log("%s", summary)
	}
	if first {
		a.log("refused %s from %s: wrong password (more from %s in the next %s are counted in one line)", name, ip, ip, logWindow)
	}
	return wait
}

func names(m map[string]bool) string {
	var out []string
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// prune forgets the turns and windows that have passed, so the maps stay
// as small as the set of recent guessers. Called with mu held.
func (a *auth) prune(now time.Time) {
	if len(a.next)+len(a.failed) < 2048 {
		return
	}
	for k, t := range a.next {
		if t.Before(now) {
			delete(a.next, k)
		}
	}
	for ip, f := range a.failed {
		if now.Sub(f.since) > logWindow {
			delete(a.failed, ip)
		}
	}
}

// publicKey lets a key try: an instructor's key for the user instructor,
// a participant's key for anyone. It decides nothing else (see auth).
func (a *auth) publicKey(ctx ssh.Context, key ssh.PublicKey) bool {
	if ctx.User() == Instructor && has(a.cfg.InstructorKeys, key) {
		return true
	}
	return has(a.cfg.ParticipantKeys, key)
}

// isInstructor reads who the session is from the key that authenticated
// it (the library takes it from the handshake's final permissions, not
// from the keys offered on the way): instructor@ with an instructor's key.
func (a *auth) isInstructor(sess ssh.Session) bool {
	k := sess.PublicKey()
	return sess.User() == Instructor && k != nil && has(a.cfg.InstructorKeys, k)
}

func has(keys []ssh.PublicKey, key ssh.PublicKey) bool {
	for _, k := range keys {
		if ssh.KeysEqual(k, key) {
			return true
		}
	}
	return false
}

// host is the address part of a remote address.
func host(a net.Addr) string {
	if a == nil {
		return "?"
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

// safeName is a user name as a log line may show it: what arrives over SSH
// is hostile, and a name with escapes must not drive the terminal that
// reads the log.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 64 {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError || unicode.Is(unicode.Cf, r) {
			r = '?'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ParseKeys reads an authorized_keys file.
func ParseKeys(path string) ([]ssh.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keys from %s: %w", path, err)
	}
	var out []ssh.PublicKey
	for len(strings.TrimSpace(string(b))) > 0 {
		k, _, _, rest, err := gossh.ParseAuthorizedKey(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (one key per line, as in authorized_keys)", path, err)
		}
		out = append(out, k)
		b = rest
	}
	return out, nil
}

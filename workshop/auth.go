package workshop

import (
	"crypto/subtle"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// Instructor is the SSH user name that opens the room (with a key from
// --instructor-keys, nothing else).
const Instructor = "instructor"

// guessInterval is how often one address may try a password once it has
// guessed wrong: about five guesses a second, across all its connections.
// An address with no recent failure waits for nothing, so a class behind
// one NAT address logs in at once.
const guessInterval = 200 * time.Millisecond

// suspectFor is how long a wrong guess slows its address down.
const suspectFor = 10 * time.Second

// auth answers the SSH handshake's questions. It decides only whether a
// credential may log in: who the session is (the instructor or not) is
// read from the key that authenticated, after the handshake (isInstructor).
// A public-key callback also runs for keys a client merely offers, without
// proving it holds them, so nothing it sees may decide anything else.
type auth struct {
	cfg *Config
	log func(format string, args ...any)

	mu       sync.Mutex
	next     map[string]time.Time // address → when its next guess may be tried
	lastFail map[string]time.Time // address → its last wrong guess
}

func newAuth(cfg *Config, log func(string, ...any)) *auth {
	return &auth{cfg: cfg, log: log, next: map[string]time.Time{}, lastFail: map[string]time.Time{}}
}

// password checks the workshop password, one guess at a time per address
// that has guessed wrong lately.
func (a *auth) password(ctx ssh.Context, pass string) bool {
	ip := host(ctx.RemoteAddr())
	if wait := a.slot(ip); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return false
		}
	}
	ok := a.cfg.Password != "" && subtle.ConstantTimeCompare([]byte(pass), []byte(a.cfg.Password)) == 1
	if !ok {
		a.mu.Lock()
		a.lastFail[ip] = time.Now()
		a.prune()
		a.mu.Unlock()
		a.log("refused %s from %s: wrong password", safeName(ctx.User()), ip)
	}
	return ok
}

// slot reserves the address's next guess and says how long to wait for it.
func (a *auth) slot(ip string) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	if now.Sub(a.lastFail[ip]) > suspectFor {
		return 0
	}
	at := a.next[ip]
	if at.Before(now) {
		at = now
	}
	a.next[ip] = at.Add(guessInterval)
	return at.Sub(now)
}

// prune forgets addresses that have not guessed wrong lately, so the maps
// stay as small as the set of recent guessers. Called with mu held.
func (a *auth) prune() {
	if len(a.lastFail) < 1024 {
		return
	}
	for ip, t := range a.lastFail {
		if time.Since(t) > suspectFor {
			delete(a.lastFail, ip)
			delete(a.next, ip)
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
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
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

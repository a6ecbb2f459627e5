// Package secret keeps passwords out of everything the lab prints. An
// address shown to a person goes through DSN, URL or Addr, which mask the
// password whatever shape the input has (well formed or not, with or without
// a scheme, a password holding '@', ':' or '/'); and every text the lab
// writes (errors, logs, reports) can go through Scrub, which masks the
// passwords of every address the process was given (Note).
//
// The rule does not trust a parser: a parser that half-understands a
// malformed input is exactly what echoes a password. Credentials are what
// stands between the scheme (or the start) and the last '@'; the password is
// what follows the first ':' there. A malformed input with nothing
// address-like after its last '@' is not shown at all.
package secret

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a password.
const Mask = "xxxxx"

// Kind is what an input is meant to be; it decides what counts as well formed.
type Kind int

const (
	KindDSN  Kind = iota // go-sql-driver: user:password@tcp(host:3306)/db
	KindURL              // amqp://user:password@host:5672/vhost, http://…
	KindAddr             // host:port
)

var (
	// Well-formed inputs without an '@' carry no credentials and print as
	// they are; anything else without an '@' is not shown.
	dsnNoCred  = regexp.MustCompile(`^(?:[a-z]+\([^\s()@]*\))?/[^\s@]*$`)
	urlNoCred  = regexp.MustCompile(`^[a-z][a-z0-9+.-]*://[A-Za-z0-9._\-\[\]]+(?::[0-9]+)?(?:/[^\s@]*)?$`)
	addrNoCred = regexp.MustCompile(`^[A-Za-z0-9._\-\[\]:]*:[0-9]+$`)
	// After the last '@' of a malformed input: shown only when it is
	// plainly an address, tcp(…)/… or a host with a dot, a port or the name
	// localhost, then an optional /path. Anything vaguer may be the end of
	// a password that held an '@'.
	addressy = regexp.MustCompile(`^(?:[a-z]+\([^\s()@]*\)|[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+(?::[0-9]+)?|[A-Za-z0-9\-]+:[0-9]+|localhost|\[[0-9a-fA-F:]+\](?::[0-9]+)?)(?:/[^\s@]*)?$`)
	// In a URL, a bare host name (a compose service: amqp://…@rabbitmq/) too,
	// with at most a "/" after it.
	bareHost = regexp.MustCompile(`^[A-Za-z0-9\-]+/?$`)
	dsnNet   = regexp.MustCompile(`^[a-z]+\(`)
)

// DSN is a MySQL DSN fit to print.
func DSN(s string) string { return redact(s, KindDSN) }

// URL is an AMQP or HTTP URL fit to print.
func URL(s string) string { return redact(s, KindURL) }

// Addr is a host:port fit to print.
func Addr(s string) string { return redact(s, KindAddr) }

// Hidden is what stands for an input that is not shown.
func Hidden(s string) string {
	return fmt.Sprintf("[%d characters, not shown: the lab cannot tell which part is a password]", len([]rune(s)))
}

func redact(s string, k Kind) string {
	start, at, ok := credentials(s)
	if !ok {
		if noCred(s, k) {
			return s
		}
		return Hidden(s)
	}
	rest := s[at:] // "@host..."
	if !wellFormed(s, k) && !addressy.MatchString(rest[1:]) {
		return Hidden(s)
	}
	cred := s[start:at]
	if c := strings.IndexByte(cred, ':'); c >= 0 {
		return s[:start+c+1] + Mask + rest
	}
	return s // a user with no password
}

// credentials finds the credential part s[start:at] (at is the last '@').
func credentials(s string) (start, at int, ok bool) {
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + 3
	}
	at = strings.LastIndexByte(s, '@')
	if at < start {
		return 0, 0, false
	}
	return start, at, true
}

func noCred(s string, k Kind) bool {
	switch k {
	case KindDSN:
		return dsnNoCred.MatchString(s)
	case KindURL:
		return urlNoCred.MatchString(s)
	default:
		return addrNoCred.MatchString(s)
	}
}

// wellFormed is a shape check, not a parse: enough to trust that what
// follows the last '@' is the host part.
func wellFormed(s string, k Kind) bool {
	_, at, _ := credentials(s)
	rest := s[at+1:]
	switch k {
	case KindDSN:
		return dsnNoCred.MatchString(rest) || dsnNet.MatchString(rest)
	case KindURL:
		return strings.Contains(s, "://") && !strings.ContainsAny(s, " \t\n") && (addressy.MatchString(rest) || bareHost.MatchString(rest))
	default:
		return addrNoCred.MatchString(rest)
	}
}

// Passwords are the parts of s that Scrub must never let through: the
// password as written and as a URL decodes it; for an input with no
// recognisable shape, the whole input.
func Passwords(s string, k Kind) []string {
	if s == "" {
		return nil
	}
	start, at, ok := credentials(s)
	if !ok {
		if noCred(s, k) {
			return nil
		}
		return []string{s}
	}
	cred := s[start:at]
	c := strings.IndexByte(cred, ':')
	if c < 0 {
		return nil
	}
	pw := cred[c+1:]
	if pw == "" {
		return nil
	}
	out := []string{pw}
	if d, err := url.PathUnescape(pw); err == nil && d != pw {
		out = append(out, d)
	}
	if !wellFormed(s, k) && !addressy.MatchString(s[at+1:]) {
		out = append(out, s)
	}
	return out
}

var noted = struct {
	sync.RWMutex
	list []string // longest first, so a longer secret is masked whole
}{}

// Note records the passwords of the inputs of the given kind, for Scrub.
// The lab notes every DSN, URL and address it is given as it reads them.
func Note(k Kind, inputs ...string) {
	noted.Lock()
	defer noted.Unlock()
	for _, in := range inputs {
		for _, p := range Passwords(in, k) {
			// A one- or two-character password would mask half of every
			// message; it cannot be told apart from text.
			if len(p) >= 3 && !slices.Contains(noted.list, p) {
				noted.list = append(noted.list, p)
			}
		}
	}
	slices.SortFunc(noted.list, func(a, b string) int { return len(b) - len(a) })
}

// NotePassword records a bare password the lab made (a login it gave a
// program), for Scrub.
func NotePassword(p string) {
	noted.Lock()
	defer noted.Unlock()
	if len(p) >= 3 && !slices.Contains(noted.list, p) {
		noted.list = append(noted.list, p)
	}
	slices.SortFunc(noted.list, func(a, b string) int { return len(b) - len(a) })
}

// Scrub masks every noted password in text.
func Scrub(text string) string {
	noted.RLock()
	defer noted.RUnlock()
	for _, p := range noted.list {
		if strings.Contains(text, p) {
			text = strings.ReplaceAll(text, p, Mask)
		}
	}
	return text
}

// Writer scrubs everything written through it. The lab's commands write
// whole lines or whole reports per call, so a password is never split
// across two writes.
func Writer(w io.Writer) io.Writer { return scrubWriter{w} }

type scrubWriter struct{ w io.Writer }

func (s scrubWriter) Write(b []byte) (int, error) {
	out := Scrub(string(b))
	if _, err := io.WriteString(s.w, out); err != nil {
		return 0, err
	}
	return len(b), nil
}

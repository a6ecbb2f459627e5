// Package password makes the passwords of the logins the lab makes and
// mysql_native_password's stored form of them, for the servers that take a
// login's hash instead of its password (so the password never travels in a
// statement another session could read).
package password

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// New is a fresh random password: hex digits only, nothing to escape in a
// statement, a DSN or a URL.
func New() string {
	b := make([]byte, 18)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// NativeHash is mysql_native_password's stored form of pw: '*' and the
// upper-case hex of SHA1(SHA1(pw)).
func NativeHash(pw string) string {
	a := sha1.Sum([]byte(pw))
	b := sha1.Sum(a[:])
	return "*" + strings.ToUpper(hex.EncodeToString(b[:]))
}

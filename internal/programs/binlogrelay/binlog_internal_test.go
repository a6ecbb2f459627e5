package binlogrelay

import (
	"strings"
	"testing"
)

func TestTheReplicationClientReachesTheDSNsServerOverTCPOnly(t *testing.T) {
	for _, c := range []struct {
		dsn, host string
		port      uint16
	}{
		{"root:@tcp(127.0.0.1:3307)/", "127.0.0.1", 3307},
		{"root:pw@tcp([::1]:3306)/", "::1", 3306},
		{"root:@tcp(db)/", "db", 3306},
	} {
		_, host, port, err := serverOf(c.dsn)
		if err != nil || host != c.host || port != c.port {
			t.Errorf("%s: %s %d %v, want %s %d", c.dsn, host, port, err, c.host, c.port)
		}
	}
	for dsn, want := range map[string]string{
		"root:@unix(/run/mysqld/mysqld.sock)/": "over TCP",
		"root:@tcp(127.0.0.1:99999)/":          "not a port number",
		"not a dsn at all(":                    "the MySQL DSN",
	} {
		if _, _, _, err := serverOf(dsn); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", dsn, err, want)
		}
	}
}

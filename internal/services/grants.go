package services

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
)

// A login the lab makes for a participant or a program may do things in
// its own databases only. Its grants are read back from the server, not
// assumed from the statements sent: an account of that name may already
// exist with more (a user an earlier lab made with PROCESS, or one a DBA
// widened), and CREATE USER IF NOT EXISTS keeps what it had.

var grantRe = regexp.MustCompile(`(?is)^GRANT\s+(.+?)\s+ON\s+(\S+)\s+TO\s`)

// BeyondOwnDatabases are the grants among SHOW GRANTS lines that reach past
// a database: any privilege but USAGE on *.*, a PROXY, a role.
func BeyondOwnDatabases(grants []string) []string {
	var out []string
	for _, g := range grants {
		g = strings.TrimSpace(g)
		m := grantRe.FindStringSubmatch(g)
		switch {
		case m == nil:
			// GRANT role TO user: whatever the role holds.
			out = append(out, g)
		case strings.EqualFold(m[1], "PROXY"):
			out = append(out, g)
		case m[2] == "*.*" && !strings.EqualFold(m[1], "USAGE"):
			out = append(out, g)
		}
	}
	return out
}

// Grants are SHOW GRANTS FOR account.
func Grants(ctx context.Context, server *sql.DB, account string) ([]string, error) {
	rows, err := server.QueryContext(ctx, "SHOW GRANTS FOR "+account)
	if err != nil {
		return nil, fmt.Errorf("read %s's grants: %w", account, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var g string
		if err := rows.Scan(&g); err != nil {
			return nil, fmt.Errorf("read %s's grants: %w", account, err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// KeptToItsDatabases fails when account holds anything beyond its
// databases, naming what.
func KeptToItsDatabases(ctx context.Context, server *sql.DB, account string) error {
	g, err := Grants(ctx, server, account)
	if err != nil {
		return err
	}
	if wide := BeyondOwnDatabases(g); len(wide) > 0 {
		return fmt.Errorf("%s holds more than its own databases after the lab's grants: %s (revoke it: REVOKE ALL PRIVILEGES, GRANT OPTION FROM %s)",
			account, strings.Join(wide, "; "), account)
	}
	return nil
}

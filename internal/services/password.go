package services

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/rmlab/lab/internal/password"
)

// A password never travels in a statement: another session holding
// PROCESS reads every session's statement in the process list, and a
// statement held behind a lock stays there long enough to be read. MariaDB
// takes the hash of a password the lab made (IDENTIFIED BY PASSWORD
// '*…', mysql_native_password's form: the hash logs no one in); MySQL 8.0.18
// and later makes a random password itself and hands it back as a result
// row to this session only (IDENTIFIED BY RANDOM PASSWORD): MySQL 9 has no
// mysql_native_password, and its caching_sha2 hash is salted per server.

// NativeHash is mysql_native_password's stored form of pw.
func NativeHash(pw string) string { return password.NativeHash(pw) }

// SetPassword gives account ('user'@'host', written by the lab: nothing
// to escape) a new random password without the password appearing in any
// statement, and returns it.
func SetPassword(ctx context.Context, server *sql.DB, account string) (string, error) {
	mariadb, err := isMariaDB(ctx, server)
	if err != nil {
		return "", err
	}
	if mariadb {
		pw := Password()
		if _, err := server.ExecContext(ctx, "ALTER USER "+account+" IDENTIFIED BY PASSWORD '"+NativeHash(pw)+"'"); err != nil {
			return "", fmt.Errorf("give %s a password: %w", account, err)
		}
		return pw, nil
	}
	// One row: user, host, generated password, auth_factor.
	rows, err := server.QueryContext(ctx, "ALTER USER "+account+" IDENTIFIED BY RANDOM PASSWORD")
	if err != nil {
		return "", fmt.Errorf("give %s a password: %w", account, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() || len(cols) < 3 {
		return "", fmt.Errorf("give %s a password: MySQL sent no generated password back (%v)", account, rows.Err())
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return "", fmt.Errorf("give %s a password: %w", account, err)
	}
	pw := string(vals[2])
	if pw == "" {
		return "", fmt.Errorf("give %s a password: MySQL sent an empty generated password back", account)
	}
	return pw, nil
}

func isMariaDB(ctx context.Context, server *sql.DB) (bool, error) {
	var v string
	if err := server.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return false, fmt.Errorf("read the MySQL server's version: %w", err)
	}
	return strings.Contains(strings.ToLower(v), "mariadb"), nil
}

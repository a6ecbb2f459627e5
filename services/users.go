package services

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// LabUserPrefix is what every MySQL user the lab makes in namespace ns
// starts with (a challenge's program runs as rmlab_NS_c1, …), so that a run
// and lab clean can drop the users a killed run left.
func LabUserPrefix(ns string) string { return "rmlab_" + ns + "_" }

// DropLabUsers drops every MySQL user of namespace ns the lab made, and
// returns their names.
func DropLabUsers(ctx context.Context, server *sql.DB, ns string) ([]string, error) {
	like := strings.NewReplacer("_", `\_`, "%", `\%`).Replace(LabUserPrefix(ns)) + "%"
	rows, err := server.QueryContext(ctx, "SELECT User, Host FROM mysql.user WHERE User LIKE ?", like)
	if c := Code(err); c == 1142 || c == 1143 || c == 1044 {
		return nil, nil // a login that cannot read mysql.user never made users either
	}
	if err != nil {
		return nil, fmt.Errorf("list the MySQL users the lab made (mysql.user): %w", err)
	}
	var users [][2]string
	for rows.Next() {
		var u, h string
		if rows.Scan(&u, &h) == nil {
			users = append(users, [2]string{u, h})
		}
	}
	rows.Close()
	var names []string
	for _, u := range users {
		// Names the lab made: letters, digits and _ only, nothing to escape.
		if _, err := server.ExecContext(ctx, fmt.Sprintf("DROP USER IF EXISTS '%s'@'%s'", u[0], u[1])); err != nil {
			return names, fmt.Errorf("drop the MySQL user %s: %w", u[0], err)
		}
		names = append(names, u[0])
	}
	return names, nil
}

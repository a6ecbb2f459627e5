package services_test

import (
	"context"
	"slices"
	"testing"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

// DropLabUsers drops the users of one namespace and nobody else's: '_' in
// LIKE matches any character, so a namespace's prefix must be escaped or
// rmlab_ab_ would take rmlab_abx_c1 too; and namespace ab_x's users
// (rmlab_ab_x_c1) start with ab's prefix.
func TestDropLabUsersDropsOneNamespacesUsersOnly(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL)
	db := env.Svc.MySQL
	ctx := context.Background()
	mine, other, longer := services.LabUserPrefix(env.NS)+"c1", services.LabUserPrefix(env.NS+"x")+"c1", services.LabUserPrefix(env.NS+"_x")+"c1"
	for _, u := range []string{mine, other, longer} {
		if _, err := db.ExecContext(ctx, "CREATE USER '"+u+"'@'localhost'"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		db.Exec("DROP USER IF EXISTS '" + other + "'@'localhost'")
		db.Exec("DROP USER IF EXISTS '" + longer + "'@'localhost'")
	})
	dropped, err := services.DropLabUsers(ctx, db, env.NS)
	if err != nil || !slices.Equal(dropped, []string{mine}) {
		t.Fatalf("dropped %q (%v), want only %s", dropped, err, mine)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User IN (?, ?, ?)", mine, other, longer).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d of the three users are left, want %s and %s", n, other, longer)
	}
}

package workshop_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rmlab/lab/internal/services"
	"github.com/rmlab/lab/internal/workshop"
)

// A name whose databases someone's own lab run made (lab --namespace NAME
// on the same server) is not the room's to give: a participant who logs in
// as it is refused with the reason, before any login is granted it. A
// participant's own databases, made in the room, are theirs again on their
// next login, and another room's are not.
func TestANameWhoseDatabasesAnotherLabRunMadeIsNotGivenToAParticipant(t *testing.T) {
	t.Parallel()
	svc := connectServices(t)
	rm := openRoom(t, "test-owned")
	addr, srv := start(t, workshop.Config{Seats: 2, Services: svc, Room: rm})
	ctx := context.Background()
	admin := testEnv(t).Svc.MySQL

	victim := who(t, "vi")
	mine, err := services.Recreate(ctx, admin, services.Names{NS: victim}, services.IdempotencyDB) // lab --namespace victim
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { services.DropOwned(context.Background(), admin, mine) })
	tm := connect(t, addr, victim)
	tm.until(t, "the refusal", func(s string) bool { return strings.Contains(s, "is taken") })
	if !strings.Contains(tm.text(), "lab --namespace "+victim) || hasScreen(tm.text()) {
		t.Errorf("the refusal does not say whose the name is, or a screen opened:\n%s", tail(tm.text()))
	}
	var users int
	if err := admin.QueryRow("SELECT COUNT(*) FROM mysql.user WHERE User=?", services.ParticipantUser(victim)).Scan(&users); err != nil || users != 0 {
		t.Errorf("a refused name got %d MySQL users (%v)", users, err)
	}
	var rows int
	if err := admin.QueryRow("SELECT COUNT(*) FROM `" + mine + "`.`" + services.MarkTable + "`").Scan(&rows); err != nil || rows != 1 {
		t.Errorf("the other run's database was touched: %d marks (%v)", rows, err)
	}

	// Made in this room: the participant's own, on every login.
	alice := who(t, "al")
	name := services.Names{NS: alice}.Name(services.OutboxDB)
	if _, err := admin.Exec("CREATE DATABASE `" + name + "`"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { services.DropOwned(context.Background(), admin, name) })
	if err := services.MarkFor(ctx, admin, name, "room "+rm.Name); err != nil {
		t.Fatal(err)
	}
	_, done, err := srv.ParticipantServices(ctx, alice)
	if err != nil {
		t.Fatalf("alice's own databases, made in the room, were refused her: %v", err)
	}
	done()
	if err := services.Claim(ctx, admin, alice, "room another"); err == nil || !strings.Contains(err.Error(), "room "+rm.Name) {
		t.Errorf("another room was given alice's databases, or not told whose they are: %v", err)
	}
	// A database of that name the lab did not make at all.
	bare := who(t, "ba")
	if _, err := admin.Exec("CREATE DATABASE `" + services.Names{NS: bare}.Name(services.IdempotencyDB) + "`"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS `" + services.Names{NS: bare}.Name(services.IdempotencyDB) + "`")
	})
	if err := services.Claim(ctx, admin, bare, "room "+rm.Name); err == nil || !strings.Contains(err.Error(), "did not make it") {
		t.Errorf("a database the lab did not make was given away: %v", err)
	}
}

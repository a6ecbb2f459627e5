package room_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/room"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// open opens a room named after the test's namespace (lab_room_NS), which
// the harness drops when the test ends.
func open(t *testing.T) *room.Room {
	t.Helper()
	env := labtest.Connect(t, labtest.MySQL)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := room.Open(ctx, env.Svc.MySQL, env.Config().MySQL, env.NS, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// TestAPredictTallyCountsEveryParticipantsAnswer: the class's answers at a
// predict step, read from the participants' progress in the room.
func TestAPredictTallyCountsEveryParticipantsAnswer(t *testing.T) {
	r := open(t)
	ctx := context.Background()
	for name, pick := range map[string]string{"ann": "yes", "ben": "no", "cat": "yes"} {
		snap := `{"lessons":{"broker-three-links":{"step":4,"predictions":{"confirm-means-processed":"` + pick + `"}}},` +
			`"activity":{"lesson":"broker-three-links","step":4,"steps":20,"passed":4}}`
		if err := r.Store(name).Save(ctx, []byte(snap)); err != nil {
			t.Fatal(err)
		}
	}
	tally, err := r.Tally(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := tally["broker-three-links"]["confirm-means-processed"]
	if got["yes"] != 2 || got["no"] != 1 {
		t.Fatalf("tally %v, want yes 2, no 1", got)
	}
	ps, err := r.Participants(ctx)
	if err != nil || len(ps) != 3 || ps[0].Step != 4 || ps[0].Steps != 20 {
		t.Fatalf("participants %+v, %v", ps, err)
	}
	// A participant's own progress comes back from the room, whole.
	f, err := r.Store("ben").Load(ctx)
	if err != nil || f.Lessons["broker-three-links"].Predictions["confirm-means-processed"] != "no" {
		t.Fatalf("ben's progress %+v, %v", f, err)
	}
}

// TestARoomRefusesADatabaseTheLabDidNotCreate: a same-named database
// without the lab's mark is left alone.
func TestARoomRefusesADatabaseTheLabDidNotCreate(t *testing.T) {
	ctx := context.Background()
	env := labtest.Connect(t, labtest.MySQL)
	server, dsn := env.Svc.MySQL, env.Config().MySQL
	if _, err := server.Exec("CREATE DATABASE " + room.DBName(env.NS)); err != nil {
		t.Fatal(err)
	}
	// The refusal, not any error: a failed lookup is no proof it refused.
	if _, err := room.Open(ctx, server, dsn, env.NS, "test"); err == nil || !strings.Contains(err.Error(), "was not created by the lab; nothing was touched") {
		t.Fatalf("opened a room in a database the lab did not create, or failed otherwise: %v", err)
	}
}

// TestAnUnknownRoomIsAnErrorNotANewEmptyRoom: a name no lab serve used is an error.
func TestAnUnknownRoomIsAnErrorNotANewEmptyRoom(t *testing.T) {
	ctx := context.Background()
	env := labtest.Connect(t, labtest.MySQL)
	server, dsn := env.Svc.MySQL, env.Config().MySQL
	if _, err := room.Existing(ctx, server, dsn, env.NS, "test"); err == nil || !strings.Contains(err.Error(), "there is no room") {
		t.Fatalf("opened a room nobody created, or failed otherwise: %v", err)
	}
	var n int
	if err := server.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", room.DBName(env.NS)).Scan(&n); err != nil {
		t.Fatal(err) // a failed count read as 0 would pass
	}
	if n != 0 {
		t.Error("asking for an unknown room created its database")
	}
}

package bench_test

import (
	"context"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/bench"
	"github.com/rmlab/lab/internal/labtest"
	"github.com/rmlab/lab/internal/services"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// A small run against the real services, in a namespace of the test's own
// (the bench adds "bench" to it).
func TestBenchRelayMeasuresBothSidesAndLeavesNothingBehind(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL, labtest.RabbitMQ)
	cfg := env.Config()
	ns := env.NS
	env.Track("queue", services.Names{NS: env.Derived("bench")}.Name("bench.relay"))
	res, err := bench.Run(context.Background(), cfg, bench.Options{Events: 300, Workers: 2, Batch: 20, SkipLocked: true, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.EventsPerSec <= 0 || res.BaselinePerSec <= 0 || res.Ratio <= 0 || res.P50ms <= 0 || res.P99ms < res.P50ms || res.ClaimSelectMs <= 0 {
		t.Fatalf("implausible result %+v", res)
	}
	server := env.Svc.MySQL
	var n int
	name := services.Names{NS: ns + "bench"}.Name(services.OutboxDB)
	if err := server.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", name).Scan(&n); err != nil || n != 0 {
		t.Fatalf("database %s still exists (%d, %v)", name, n, err)
	}
}

// While one relay's claim holds its row locks, a plain FOR UPDATE claim
// waits for them and a SKIP LOCKED claim takes other rows: the waiting shows
// in the claim SELECT's time (the hold is long, so this is a behaviour, not
// a speed, and stays far from any threshold).
func TestPlainForUpdateClaimsWaitBehindAHeldClaimAndSkipLockedOnesDoNot(t *testing.T) {
	env := labtest.Connect(t, labtest.MySQL, labtest.RabbitMQ)
	cfg := env.Config()
	env.Track("queue", services.Names{NS: env.Derived("bench")}.Name("bench.relay"))
	hold := 40 * time.Millisecond
	sel := map[bool]float64{}
	for _, skip := range []bool{true, false} {
		res, err := bench.Run(context.Background(), cfg, bench.Options{Events: 200, Workers: 2, Batch: 20, SkipLocked: skip, Rounds: 1, ClaimHold: hold})
		if err != nil {
			t.Fatal(err)
		}
		sel[skip] = res.ClaimSelectMs
		t.Logf("skip locked %v: claim SELECT %.1f ms, %.0f events/s", skip, res.ClaimSelectMs, res.EventsPerSec)
	}
	if sel[false] < 10 || sel[true] > sel[false]/2 {
		t.Fatalf("claim SELECT with a %s hold: SKIP LOCKED %.1f ms, plain FOR UPDATE %.1f ms; want FOR UPDATE to wait (>= 10 ms) and SKIP LOCKED not", hold, sel[true], sel[false])
	}
}

package bench_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/rmlab/lab/bench"
	"github.com/rmlab/lab/services"
)

// A small run against the real services, under a random namespace.
func TestBenchRelayMeasuresBothSidesAndLeavesNothingBehind(t *testing.T) {
	ns := "bt" + strings.ToLower(rand.Text()[:6])
	cfg := services.Config{Namespace: ns}
	res, err := bench.Run(context.Background(), cfg, bench.Options{Events: 300, Workers: 2, Batch: 20, SkipLocked: true, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.EventsPerSec <= 0 || res.BaselinePerSec <= 0 || res.Ratio <= 0 || res.P50ms <= 0 || res.P99ms < res.P50ms {
		t.Fatalf("implausible result %+v", res)
	}
	server, err := services.Open(context.Background(), cfg.FromEnv().MySQL, "")
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	var n int
	name := services.Names{NS: ns + "bench"}.Name(services.OutboxDB)
	if err := server.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME=?", name).Scan(&n); err != nil || n != 0 {
		t.Fatalf("database %s still exists (%d, %v)", name, n, err)
	}
}

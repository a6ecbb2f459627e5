package relay_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rmlab/lab/internal/programs/relay"
)

// The claim and mark paths against the real database, batch by batch; the
// broker round trip is measured by `lab bench relay`.

func preload(b *testing.B, f *fixture, n int) {
	b.Helper()
	for i := 0; i < n; i += 500 {
		q := "INSERT INTO outbox_event (event_id,aggregate_id,event_type,payload,status,available_at,created_at) VALUES "
		var args []any
		for j := i; j < min(i+500, n); j++ {
			if j > i {
				q += ","
			}
			q += "(?,?,'OrderPaid',JSON_OBJECT('orderId',?),'NEW',NOW(6),NOW(6))"
			args = append(args, fmt.Sprintf("ev-%08d", j), j, j)
		}
		if _, err := f.db.Exec(q, args...); err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkClaim(b *testing.B, batch int) {
	f := setup(b)
	preload(b, f, b.N*batch)
	r := f.relay(b, relay.Config{Name: "bench", SkipLocked: true, Batch: batch}, nil, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs, _, err := r.Claim(context.Background())
		if err != nil || len(evs) != batch {
			b.Fatalf("claimed %d (%v)", len(evs), err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkClaimOne(b *testing.B)     { benchmarkClaim(b, 1) }
func BenchmarkClaimBatch50(b *testing.B) { benchmarkClaim(b, 50) }

func benchmarkPass(b *testing.B, batch int) {
	f := setup(b)
	preload(b, f, b.N*batch)
	r := f.relay(b, relay.Config{Name: "bench", SkipLocked: true, Batch: batch}, nil, nil)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n, err := r.Pass(context.Background()); err != nil || n != batch {
			b.Fatalf("pass handled %d (%v)", n, err)
		}
	}
	b.StopTimer()
	if c := r.Counts(); c.Sent != int64(b.N*batch) {
		b.Fatalf("SENT %d of %d", c.Sent, b.N*batch)
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkPass* is claim, publish, confirm and mark: the mark path's cost is
// the difference from the claim alone.
func BenchmarkPassOne(b *testing.B)     { benchmarkPass(b, 1) }
func BenchmarkPassBatch50(b *testing.B) { benchmarkPass(b, 50) }

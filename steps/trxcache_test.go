package steps

import (
	"context"
	"testing"
	"time"
)

// A read of InnoDB's transaction tables right after a statement waits
// until the server's 0.1 s cache must be refreshed; any other statement
// does not wait.
func TestAReadOfInnoDBTransactionsWaitsOutTheServersCacheAndNothingElseWaits(t *testing.T) {
	r := &Run{}
	r.touchSQL()
	start := time.Now()
	r.settleTrxCache(context.Background(), "SELECT * FROM points_account")
	if d := time.Since(start); d >= 100*time.Millisecond {
		t.Fatalf("an ordinary SELECT waited %s", d)
	}
	r.touchSQL()
	start = time.Now()
	r.settleTrxCache(context.Background(), "SELECT t.trx_state FROM information_schema.INNODB_TRX t")
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("a read of INNODB_TRX right after a statement waited only %s; the server may answer from a cache filled before it", d)
	}
	// Long after the last statement: no wait.
	r.mu.Lock()
	r.lastSQL = time.Now().Add(-time.Second)
	r.mu.Unlock()
	start = time.Now()
	r.settleTrxCache(context.Background(), "select * from information_schema.innodb_trx")
	if d := time.Since(start); d >= 100*time.Millisecond {
		t.Fatalf("waited %s a second after the last statement", d)
	}
}

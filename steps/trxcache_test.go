package steps

import (
	"testing"
	"time"
)

// A read of InnoDB's transaction tables right after a statement waits
// until the server's 0.1 s cache must be refreshed; any other statement,
// or one long after the last, does not wait.
func TestAReadOfInnoDBTransactionsWaitsOutTheServersCacheAndNothingElseWaits(t *testing.T) {
	last := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	trx := "SELECT t.trx_state FROM information_schema.INNODB_TRX t"
	for _, c := range []struct {
		stmt  string
		after time.Duration
		want  time.Duration
	}{
		{"SELECT * FROM points_account", 0, 0},
		{trx, 0, 110 * time.Millisecond},
		{trx, 30 * time.Millisecond, 80 * time.Millisecond},
		{"select * from information_schema.innodb_lock_waits", 0, 110 * time.Millisecond},
		{trx, time.Second, 0},
	} {
		if got := trxCacheWait(c.stmt, last, last.Add(c.after)); got != c.want {
			t.Errorf("%q %s after the last statement: wait %s, want %s", c.stmt, c.after, got, c.want)
		}
	}
}

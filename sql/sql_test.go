package sql

import (
	"strings"
	"testing"
)

// programStatement reports whether an embedded file is one a worker program
// loads as a single statement: the producer's, the consumer's, the
// executor's, the batch consumer's, the binary-log relay's, and the relay's
// claimed-ids query (the relay's other files are loaded by LoadStatements,
// relay_columns.sql holding several).
func programStatement(name string) bool {
	for _, prefix := range []string{
		"outbox/producer_", "idempotency/consumer_", "idempotency/executor_",
		"idempotency/batch_", "outbox/binlog_relay_",
	} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return name == "outbox/relay_claimed_ids.sql" || name == "outbox/relay_has_columns.sql"
}

// A program loads its statements when it starts (Statement panics on a
// bad file): every program statement file must hold exactly one.
func TestEveryProgramStatementFileHoldsOneStatement(t *testing.T) {
	n := 0
	for _, name := range Names() {
		if !programStatement(name) {
			continue
		}
		n++
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", name, r)
				}
			}()
			if s := Statement(name); strings.Contains(s, "--") {
				t.Errorf("%s: the statement carries a comment: %q", name, s)
			}
		}()
	}
	if n < 29 {
		t.Errorf("%d program statement files, want at least 29", n)
	}
	defer func() {
		if recover() == nil {
			t.Error("a file of two statements did not panic")
		}
	}()
	Statement("outbox/create_order.sql")
}

package batch

import labsql "github.com/rmlab/lab/sql"

// The batch consumer's statements live in sql/idempotency/ (batch_*.sql), so
// that a lesson can show the very text it sends.
var (
	stmtMarkInsert   = labsql.Statement("idempotency/batch_mark_insert.sql")
	stmtPointsUpdate = labsql.Statement("idempotency/batch_points_update.sql")
)

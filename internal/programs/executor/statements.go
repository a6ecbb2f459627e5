package executor

import labsql "github.com/rmlab/lab/sql"

// The executor's statements live in sql/idempotency/ (executor_*.sql), beside
// sms_task.sql's table, so that a lesson can show the very text it sends.
var (
	stmtNextTask   = labsql.Statement("idempotency/executor_next_task.sql")
	stmtClaim      = labsql.Statement("idempotency/executor_claim.sql")
	stmtRecordSent = labsql.Statement("idempotency/executor_record_sent.sql")
)

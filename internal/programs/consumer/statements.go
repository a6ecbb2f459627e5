package consumer

import labsql "github.com/rmlab/lab/sql"

// The consumer's statements live in sql/idempotency/ (consumer_*.sql), as
// the producer's and the relay's do in sql/outbox/, so that a lesson can
// show the very text it sends.
var (
	stmtMarkInsert           = labsql.Statement("idempotency/consumer_mark_insert.sql")
	stmtMarkSelect           = labsql.Statement("idempotency/consumer_mark_select.sql")
	stmtMarkCount            = labsql.Statement("idempotency/consumer_mark_count.sql")
	stmtPointsUpdate         = labsql.Statement("idempotency/consumer_points_update.sql")
	stmtSMSTaskInsert        = labsql.Statement("idempotency/consumer_sms_task_insert.sql")
	stmtOrderViewUpdate      = labsql.Statement("idempotency/consumer_order_view_update.sql")
	stmtOrderViewUpdateNewer = labsql.Statement("idempotency/consumer_order_view_update_newer.sql")
	stmtOrderViewSelect      = labsql.Statement("idempotency/consumer_order_view_select.sql")
	stmtConflictInsert       = labsql.Statement("idempotency/consumer_conflict_insert.sql")
)

package binlogrelay

import labsql "github.com/rmlab/lab/sql"

// The binary-log relay's statements live in sql/outbox/ (binlog_relay_*.sql),
// beside binlog_position.sql's table, so that a lesson can show the very
// text it sends.
var (
	stmtPositionSave   = labsql.Statement("outbox/binlog_relay_position_save.sql")
	stmtPositionSelect = labsql.Statement("outbox/binlog_relay_position_select.sql")
	stmtLogStatus      = labsql.Statement("outbox/binlog_relay_log_status.sql")
	stmtMasterStatus   = labsql.Statement("outbox/binlog_relay_master_status.sql")
	stmtColumns        = labsql.Statement("outbox/binlog_relay_columns.sql")
	stmtVersion        = labsql.Statement("outbox/binlog_relay_version.sql")
)

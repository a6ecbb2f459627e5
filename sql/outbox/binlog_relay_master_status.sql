-- The binary log's end where binlog_relay_log_status.sql fails (MariaDB,
-- older MySQL).
SHOW MASTER STATUS;

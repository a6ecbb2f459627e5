-- The binary-log relay's position (binlog_position.sql's table): after a
-- transaction's events are confirmed (or, --save before-publish, before),
-- and at the first start. Parameters: position key, log file, position.
REPLACE INTO relay_position VALUES(?,?,?,NOW(6));

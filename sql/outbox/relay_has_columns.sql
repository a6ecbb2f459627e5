-- Whether outbox_event already has the relay's columns (relay_columns.sql
-- adds them): sent_at is the last of them.
SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA=DATABASE() AND TABLE_NAME='outbox_event' AND COLUMN_NAME='sent_at';

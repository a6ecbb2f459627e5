-- At start: outbox_event's column names in table order, since the log
-- carries a row's values by position. Parameter: the outbox database's name.
SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA=? AND TABLE_NAME='outbox_event' ORDER BY ORDINAL_POSITION;

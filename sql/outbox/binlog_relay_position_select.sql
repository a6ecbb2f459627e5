-- Where the binary-log relay starts: its saved position. Parameter: position
-- key.
SELECT file, pos FROM relay_position WHERE relay=?;

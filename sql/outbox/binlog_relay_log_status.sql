-- With no saved position, the binary log's end (MySQL 8.2 and later).
SHOW BINARY LOG STATUS;

-- Before reading the log: the server's version, to speak MySQL's or
-- MariaDB's replication protocol.
SELECT VERSION();

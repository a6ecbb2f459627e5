package services

// MySQL's error numbers the lab acts on, named as the server names them
// (ER_DUP_ENTRY is ErDupEntry). Code reads one from an error; lessons write
// the number itself (error=1062), as the server prints it.
const (
	ErRecordChanged      uint16 = 1020 // MariaDB's snapshot isolation: a row changed after the snapshot
	ErDBAccessDenied     uint16 = 1044 // no privilege on the database
	ErAccessDenied       uint16 = 1045 // wrong user or password
	ErBadDB              uint16 = 1049 // unknown database
	ErBadField           uint16 = 1054 // unknown column
	ErDupEntry           uint16 = 1062 // duplicate key
	ErTableAccessDenied  uint16 = 1142 // no privilege on the table
	ErColumnAccessDenied uint16 = 1143 // no privilege on the column
	ErNoSuchTable        uint16 = 1146 // table does not exist
	ErLockWaitTimeout    uint16 = 1205 // innodb_lock_wait_timeout passed
	ErLockDeadlock       uint16 = 1213 // chosen as a deadlock's victim
)

package steps

import "testing"

// Each PROCESS-only table becomes the rows of the participant's own
// sessions, under the alias the lesson gave it or its own name, and
// CONNECTION_ID() the step session's id; the rest of the statement is as
// written.
func TestAWatchedReadKeepsEachProcessOnlyTableToTheParticipantsSessions(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID=t.trx_mysql_thread_id WHERE p.ID<>CONNECTION_ID()",
			"SELECT COUNT(*) FROM (SELECT t.* FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.USER = 'u') t JOIN (SELECT * FROM information_schema.PROCESSLIST WHERE USER = 'u') p ON p.ID=t.trx_mysql_thread_id WHERE p.ID<>42"},
		{"select trx_state from information_schema.innodb_trx where 1",
			"select trx_state from (SELECT t.* FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.USER = 'u') INNODB_TRX where 1"},
		{"SELECT * FROM information_schema.PROCESSLIST AS pl",
			"SELECT * FROM (SELECT * FROM information_schema.PROCESSLIST WHERE USER = 'u') AS pl"},
		{"SELECT * FROM information_schema.PROCESSLIST",
			"SELECT * FROM (SELECT * FROM information_schema.PROCESSLIST WHERE USER = 'u') PROCESSLIST"},
	} {
		if got := watchSQL(c.in, "u", 42); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

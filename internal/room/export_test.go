package room

// SetMaxAudit sets how many lines of each kind the room's log keeps, for a
// test that floods it; restore puts it back.
func SetMaxAudit(n int) (restore func()) {
	old := maxAudit
	maxAudit = n
	return func() { maxAudit = old }
}

package bench

import (
	"syscall"
	"time"
)

// sleepSlack is how late nanosleep wakes up on Linux (the default timer
// slack is 50µs); waitUntil yields through the rest.
const sleepSlack = 60 * time.Microsecond

// sleepPrecise sleeps d in nanosleep, which holds the OS thread but wakes
// within the timer slack, where a Go timer can wake a millisecond late. An
// interrupted sleep just returns early: waitUntil sleeps again.
func sleepPrecise(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}

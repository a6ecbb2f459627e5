//go:build !linux

package bench

import "time"

// sleepSlack: elsewhere the proxy relies on Go's timers.
const sleepSlack = 0

func sleepPrecise(d time.Duration) { time.Sleep(d) }

package worker

import (
	"os"
	"strconv"
	"syscall"
)

// Pdeathsig: the kernel kills the worker if the lab dies, even by SIGKILL or
// a panic, so no worker outlives the lab. A program of the learner's gets a
// process group of its own so that a kill reaches its children too.
func sysProcAttr(group bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: group}
}

// CloseOnExec marks every descriptor this process was started with beyond
// stdin, stdout and stderr close-on-exec: Go opens its own so, but what the
// lab inherited (a password pipe, a log file lab serve was started with)
// would pass on to every worker and every learner's program it starts.
// The lab calls it first thing.
func CloseOnExec() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}

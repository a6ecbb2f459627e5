package worker

import "syscall"

// Pdeathsig: the kernel kills the worker if the lab dies, even by SIGKILL or
// a panic, so no worker outlives the lab. A program of the learner's gets a
// process group of its own so that a kill reaches its children too.
func sysProcAttr(group bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: group}
}

package worker

import "syscall"

// Pdeathsig: the kernel kills the worker if the lab dies, even by SIGKILL or
// a panic, so no worker outlives the lab.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

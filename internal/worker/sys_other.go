//go:build !linux

package worker

import "syscall"

// Elsewhere the child's stdin EOF watcher is the guard.
func sysProcAttr(group bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: group} }

// CloseOnExec is Linux's (sys_linux.go); elsewhere the lab leaves its
// descriptors as it got them.
func CloseOnExec() {}

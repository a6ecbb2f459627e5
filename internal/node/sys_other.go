//go:build !linux

package node

import "syscall"

// Elsewhere only Linux's Pdeathsig is missing: Close and Sweep still stop
// the nodes.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

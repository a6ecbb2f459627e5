package node

import "syscall"

// Pdeathsig: the kernel kills a node's VM (and its epmd) when the lab dies,
// even by SIGKILL; its own process group keeps a terminal's Ctrl-C for the
// lab, which stops the nodes itself.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

package labtest

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// goCommandStdout is the go command's standard output, when this test
// binary's parent is the go command and lets this process copy it
// (pidfd_getfd: Linux 5.6, the parent's ptrace permission); else nil.
func goCommandStdout() *os.File {
	ppid := os.Getppid()
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return nil
	}
	if pidfd, err := unix.PidfdOpen(ppid, 0); err == nil {
		fd, err := unix.PidfdGetfd(pidfd, 1, 0)
		unix.Close(pidfd)
		if err == nil {
			return os.NewFile(uintptr(fd), "go command's stdout")
		}
	}
	// Not allowed to copy it: a pipe or a terminal opened anew is the same
	// one (a file is not: its offset would be this process's own).
	path := "/proc/" + strconv.Itoa(ppid) + "/fd/1"
	if st, err := os.Stat(path); err != nil || st.Mode().IsRegular() {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	return f
}

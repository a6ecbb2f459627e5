//go:build !linux

package labtest

import "os"

// goCommandStdout: only Linux lets a test binary write beside the go
// command's lines; elsewhere the lines show with go test -v.
func goCommandStdout() *os.File { return nil }

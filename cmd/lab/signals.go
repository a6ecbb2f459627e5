package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopContext ends when the lab is asked to stop in any way a terminal or a
// script asks, so that what it started (containers, nodes, workers) is
// removed on the way out, as after Ctrl-C:
//   - SIGINT (Ctrl-C) and SIGTERM (kill, timeout);
//   - SIGHUP, a closed terminal (unless ignored: nohup keeps a lab serve);
//   - the reader of stdout or stderr gone (lab doctor | head): see
//     readerAware;
//   - the go command gone, under go run: a signal sent to go (timeout,
//     kill) does not reach the program it runs.
func stopContext() (context.Context, context.CancelFunc) {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	parent := os.Getppid()
	goRun := underGoRun(parent)
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-readerGone:
				stop()
				return
			case <-t.C:
				if goRun && os.Getppid() != parent {
					stop()
					return
				}
			}
		}
	}()
	return ctx, stop
}

// underGoRun reports whether the parent process is the go command.
func underGoRun(ppid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/comm")
	return err == nil && strings.TrimSpace(string(b)) == "go"
}

// readerGone is closed when a write to stdout or stderr finds its reader
// gone.
var (
	readerGone = make(chan struct{})
	goneOnce   sync.Once
)

// readerAware writes to a copy of f's descriptor. Go kills a program on
// the spot when a write to descriptor 1 or 2 finds the pipe closed
// (SIGPIPE), before any deferred cleanup; on a copy the write fails with
// EPIPE instead, and the lab stops as after Ctrl-C. (Catching SIGPIPE
// itself would stop the lab whenever any socket or worker pipe broke.)
func readerAware(f *os.File) io.Writer {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return f
	}
	return pipeWriter{os.NewFile(uintptr(fd), f.Name())}
}

type pipeWriter struct{ f *os.File }

func (w pipeWriter) Write(b []byte) (int, error) {
	n, err := w.f.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		goneOnce.Do(func() { close(readerGone) })
	}
	return n, err
}

package services_test

import (
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/services"
)

// busyListener is a loopback port whose accept queue holds one connection
// and is full: the kernel drops the next SYN, as it does at a server that
// is too busy to accept (MariaDB's back_log full).
func busyListener(t *testing.T) (addr string, accept func()) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	ln, err := net.FileListener(os.NewFile(uintptr(fd), "busy"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	addr = ln.Addr().String()
	first, err := net.Dial("tcp", addr) // fills the queue
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	return addr, func() {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
	}
}

// A server that stops accepting for a few seconds (its accept queue full
// under load) is reached once it accepts again: a dial given DialTimeout
// waits it out, where the 3 s dial the lab had fails (the control case,
// which also shows the listener really holds the SYN back).
func TestAConnectionToAServerTooBusyToAcceptAtOnceOpensWhenItAccepts(t *testing.T) {
	addr, accept := busyListener(t)
	time.AfterFunc(3500*time.Millisecond, accept)
	c, err := net.DialTimeout("tcp", addr, services.DialTimeout)
	if err != nil {
		t.Fatalf("dial with the lab's timeout (%s) to a server that accepts after 3.5 s: %v", services.DialTimeout, err)
	}
	c.Close()

	addr, accept = busyListener(t)
	time.AfterFunc(3500*time.Millisecond, accept)
	if c, err := net.DialTimeout("tcp", addr, 3*time.Second); err == nil {
		c.Close()
		t.Fatal("a 3 s dial reached a server that accepts only after 3.5 s: the listener does not hold connections back, so the case above proves nothing")
	}
}

package bench_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/bench"
)

// listen starts a loopback server that hands each accepted connection to
// conns.
func listen(t *testing.T) (net.Listener, chan net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(conns)
				return
			}
			conns <- c
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln, conns
}

func proxy(t *testing.T, target string, d time.Duration) *bench.LatencyProxy {
	t.Helper()
	p, err := bench.NewLatencyProxy("tcp", target, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func accepted(t *testing.T, conns chan net.Conn) net.Conn {
	t.Helper()
	select {
	case c := <-conns:
		t.Cleanup(func() { c.Close() })
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy did not connect to the target")
		return nil
	}
}

// readEnd reads c until it ends and fails unless that happens within 5 s.
func readEnd(t *testing.T, c net.Conn, who string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s was not closed", who)
	}
}

func TestLatencyProxyForwardsBytesUnchangedAndInOrder(t *testing.T) {
	ln, conns := listen(t)
	p := proxy(t, ln.Addr().String(), 2*time.Millisecond)
	client, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := accepted(t, conns)
	go io.Copy(server, server) // echo

	want := make([]byte, 1<<20)
	rand.Read(want)
	go func() { // many writes of odd sizes: many chunks, which must stay in order
		for off := 0; off < len(want); {
			n := min(1+off%7919, len(want)-off)
			if _, err := client.Write(want[off : off+n]); err != nil {
				return
			}
			off += n
		}
	}()
	got := make([]byte, len(want))
	client.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the bytes that came back differ from the bytes sent")
	}
}

func TestLatencyProxyDelaysEachDirectionAtLeastD(t *testing.T) {
	const d = 15 * time.Millisecond
	ln, conns := listen(t)
	p := proxy(t, ln.Addr().String(), d)
	client, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := accepted(t, conns)
	buf := make([]byte, 16)
	for i := 0; i < 5; i++ {
		start := time.Now()
		if _, err := client.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(server, buf[:4]); err != nil {
			t.Fatal(err)
		}
		oneWay := time.Since(start)
		if _, err := server.Write([]byte("pong")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(client, buf[:4]); err != nil {
			t.Fatal(err)
		}
		// Lower bounds only: a loaded machine may add any amount.
		if oneWay < d {
			t.Fatalf("client → server took %s, less than the delay %s", oneWay, d)
		}
		if rt := time.Since(start); rt < 2*d {
			t.Fatalf("a round trip took %s, less than 2×%s", rt, d)
		}
	}
	if n, mean := p.Observed(); n != 10 || mean < d {
		t.Fatalf("observed %d chunks held %s on average, want 10 held at least %s", n, mean, d)
	}
}

func TestLatencyProxyCloseEndsBothSides(t *testing.T) {
	ln, conns := listen(t)
	before := runtime.NumGoroutine()
	p, err := bench.NewLatencyProxy("tcp", ln.Addr().String(), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	// The client hangs up: the server's side ends too.
	c1, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	s1 := accepted(t, conns)
	c1.Write([]byte("last words"))
	c1.Close()
	s1.SetReadDeadline(time.Now().Add(5 * time.Second))
	if got, _ := io.ReadAll(s1); string(got) != "last words" {
		t.Fatalf("the server read %q before the end, want the client's last words", got)
	}

	// The server hangs up: the client's side ends too.
	c2, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	s2 := accepted(t, conns)
	s2.Close()
	readEnd(t, c2, "the client's side after the server closed")

	// Closing the proxy ends a live connection on both sides.
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	s3 := accepted(t, conns)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	readEnd(t, c3, "the client's side after the proxy closed")
	readEnd(t, s3, "the server's side after the proxy closed")
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Fatal("the proxy still accepts connections after Close")
	}

	// No goroutine outlives Close (the test's own listener goroutine was
	// counted in before).
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

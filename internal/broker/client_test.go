package broker_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/broker"
	"github.com/rmlab/lab/internal/labtest"
)

// slowDoor forwards to the broker after holding each new connection for
// hold before its first byte: a handshake as a loaded broker answers it.
func slowDoor(t *testing.T, brokerAddr string, hold time.Duration) (addr string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = &atomic.Int32{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				time.Sleep(hold)
				b, err := net.Dial("tcp", brokerAddr)
				if err != nil {
					return
				}
				defer b.Close()
				go io.Copy(b, c)
				io.Copy(c, b)
			}()
		}
	}()
	return ln.Addr().String(), accepted
}

// A handshake that takes longer than each caller waits (the screen's 800 ms
// poll on a loaded machine) still completes: the next poll gets the
// connection the first began, and no poll begins a handshake of its own
// while one is under way. Cut at each poll's deadline, it never finished.
func TestAHandshakeSlowerThanEveryPollStillConnects(t *testing.T) {
	env := labtest.Connect(t, labtest.RabbitMQ)
	u, err := url.Parse(env.Config().AMQP)
	if err != nil {
		t.Fatal(err)
	}
	door, accepted := slowDoor(t, u.Host, 1500*time.Millisecond)
	u.Host = door
	c := broker.NewClient(u.String())
	defer c.Close()
	var polls, handshaking int
	for deadline := time.Now().Add(8 * time.Second); ; polls++ {
		if time.Now().After(deadline) {
			t.Fatalf("no connection after %d polls of 800 ms (%d of them told the handshake was under way)", polls, handshaking)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
		_, err := c.Conn(ctx)
		cancel()
		if err == nil {
			break
		}
		if !errors.Is(err, broker.ErrHandshaking) {
			t.Fatalf("poll %d: %v", polls+1, err)
		}
		handshaking++
		time.Sleep(200 * time.Millisecond)
	}
	if handshaking == 0 {
		t.Errorf("the first poll connected through a door that holds each connection 1.5 s")
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("%d connections were begun for one handshake", n)
	}
}

// A handshake that fails after its callers stopped waiting is said to the
// next one, not hidden behind a new attempt.
func TestAHandshakeThatFailsUnwatchedIsToldToTheNextCaller(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, says nothing for a second, hangs up
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { time.Sleep(time.Second); c.Close() }()
		}
	}()
	c := broker.NewClient("amqp://guest:guest@" + ln.Addr().String() + "/")
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	_, err = c.Conn(ctx)
	cancel()
	if !errors.Is(err, broker.ErrHandshaking) {
		t.Fatalf("the first caller: %v", err)
	}
	time.Sleep(1500 * time.Millisecond)
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Conn(ctx)
	if err == nil || errors.Is(err, broker.ErrHandshaking) {
		t.Fatalf("the next caller was not told the handshake failed: %v", err)
	}
	t.Log(err)
}

package bench

import (
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// LatencyProxy is a TCP proxy that delays every chunk it forwards by a fixed
// one-way latency in each direction, as a network link would: a request and
// its answer cross it once each, so a statement's round trip costs 2·delay
// more than on loopback. Each direction of each connection has a reader that
// stamps every chunk with its due time and a writer that delivers the chunks
// in order once due, so a chunk never overtakes another and back-to-back
// chunks are not delayed twice. When either direction ends, its pending
// chunks are delivered and then both sides are closed (no half-close).
//
// `lab bench relay --db-latency` puts one between the relays and the
// database, as against a database in another rack.
type LatencyProxy struct {
	ln      net.Listener
	network string
	target  string
	delay   time.Duration

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	chunks  atomic.Int64
	delayed atomic.Int64 // nanoseconds between a chunk's read and its write, summed
}

// NewLatencyProxy listens on a free loopback port and forwards each
// connection to target (dialled on network, "tcp" or "unix") with delay in
// each direction.
func NewLatencyProxy(network, target string, delay time.Duration) (*LatencyProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &LatencyProxy{ln: ln, network: network, target: target, delay: delay, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is where clients connect (host:port).
func (p *LatencyProxy) Addr() string { return p.ln.Addr().String() }

// Delay is the one-way latency it adds.
func (p *LatencyProxy) Delay() time.Duration { return p.delay }

// Observed returns the chunks forwarded so far and the mean time each spent
// in the proxy, which is at least Delay (the scheduler adds a little).
func (p *LatencyProxy) Observed() (chunks int64, mean time.Duration) {
	n := p.chunks.Load()
	if n == 0 {
		return 0, 0
	}
	return n, time.Duration(p.delayed.Load() / n)
}

// Close stops accepting, closes every connection on both sides and waits
// for all the proxy's goroutines to end.
func (p *LatencyProxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

// track registers c, or closes it when the proxy is closing.
func (p *LatencyProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *LatencyProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
	}
}

func (p *LatencyProxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if !p.track(client) {
			continue
		}
		p.wg.Add(1)
		go p.serve(client)
	}
}

// serve dials the target for client and runs both directions until either
// ends.
func (p *LatencyProxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout(p.network, p.target, 5*time.Second)
	if err != nil {
		client.Close()
		p.untrack(client)
		return
	}
	if !p.track(server) {
		client.Close()
		p.untrack(client)
		return
	}
	var once sync.Once
	done := make(chan struct{})
	end := func() {
		once.Do(func() {
			close(done)
			client.Close()
			server.Close()
		})
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(client, server, done, end) }()
	go func() { defer wg.Done(); p.pipe(server, client, done, end) }()
	wg.Wait()
	p.untrack(client, server)
}

// chunk is what one read returned, due for writing at due.
type chunk struct {
	b    []byte
	read time.Time
	due  time.Time
}

// pipe forwards src to dst, each chunk delay after it was read, in order.
// It returns when src ended and its chunks were delivered, or when the pair
// was closed; either way it calls end.
func (p *LatencyProxy) pipe(src, dst net.Conn, done chan struct{}, end func()) {
	defer end()
	q := make(chan chunk, 1024)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // reader: stamp each chunk as it arrives
		defer wg.Done()
		defer close(q)
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				now := time.Now()
				c := chunk{b: append([]byte(nil), buf[:n]...), read: now, due: now.Add(p.delay)}
				select {
				case q <- c:
				case <-done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer wg.Wait()
	for c := range q { // writer: deliver each chunk once due, in order
		if !waitUntil(c.due, done) {
			return
		}
		p.chunks.Add(1)
		p.delayed.Add(int64(time.Since(c.read)))
		if _, err := dst.Write(c.b); err != nil {
			return
		}
	}
}

// waitUntil blocks until t, or returns false when done closes first. Go's
// timers wake up to a millisecond late when the process is idle, which is as
// much as the delays this proxy adds, so the wait is a precise sleep
// (sleepPrecise) in short slices that check done, then a yield loop for the
// last few microseconds: the delay is never shorter than asked.
func waitUntil(t time.Time, done <-chan struct{}) bool {
	for {
		select {
		case <-done:
			return false
		default:
		}
		left := time.Until(t)
		if left <= 0 {
			return true
		}
		switch {
		case left > 20*time.Millisecond:
			timer := time.NewTimer(left - 10*time.Millisecond)
			select {
			case <-done:
				timer.Stop()
				return false
			case <-timer.C:
			}
		case left > sleepSlack:
			sleepPrecise(left - sleepSlack)
		default:
			runtime.Gosched()
		}
	}
}

// Package amqpproxy is a frame-aware AMQP 0-9-1 TCP proxy that injects
// faults between a client and a RabbitMQ broker: lost publisher confirms,
// lost basic.returns, latency and connection cuts at a chosen frame.
//
// Lessons and tests use it to reproduce, on demand, the wire-level failures
// that reliable publishing code must survive. Everything it is not told to
// change is forwarded byte-for-byte, so the broker and client see a normal
// session apart from the injected fault.
package amqpproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"
)

// Direction selects which way frames travel.
type Direction uint8

const (
	// ToBroker is client → broker traffic.
	ToBroker Direction = 1 << iota
	// ToClient is broker → client traffic.
	ToClient
	// Both is either direction.
	Both = ToBroker | ToClient
)

func (d Direction) String() string {
	switch d {
	case ToBroker:
		return "client→broker"
	case ToClient:
		return "broker→client"
	case Both:
		return "both"
	case 0:
		return "proxy" // events about the proxy itself, e.g. accepts
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// Match selects method frames for CutAfter. A zero Dir matches either
// direction.
type Match struct {
	Dir    Direction
	Class  uint16
	Method uint16
}

func (m Match) matches(dir Direction, class, method uint16) bool {
	return (m.Dir == 0 || m.Dir&dir != 0) && m.Class == class && m.Method == method
}

// Event is one entry of the wire log shown to learners.
type Event struct {
	Time    time.Time
	Conn    int // 1-based id of the proxied connection
	Dir     Direction
	Channel uint16
	Name    string // e.g. "basic.ack tag=3 multiple=false"
	Dropped bool   // the frame was not forwarded as received
	Note    string // what the proxy did and why
}

func (e Event) String() string {
	s := fmt.Sprintf("%s conn%d %s ch%d %s", e.Time.Format("15:04:05.000"), e.Conn, e.Dir, e.Channel, e.Name)
	if e.Dropped {
		s += " [DROPPED]"
	}
	if e.Note != "" {
		s += " (" + e.Note + ")"
	}
	return s
}

// Counts summarises the log. Confirms are counted per publish seq, so one
// multiple=true ack covering three publishes counts three.
type Counts struct {
	Connections       int
	Publishes         int
	ConfirmsForwarded int
	ConfirmsDropped   int
	ReturnsForwarded  int
	ReturnsDropped    int
}

// maxEvents caps the log so a long-running lesson cannot grow it unbounded.
const maxEvents = 10000

// Proxy accepts AMQP clients and relays each to its own upstream
// connection, applying the configured faults.
type Proxy struct {
	ln       net.Listener
	upstream string
	ctx      context.Context // cancelled by Close to abort upstream dials
	cancel   context.CancelFunc
	wg       sync.WaitGroup // every goroutine the proxy starts

	mu            sync.Mutex // guards the faults, events and counts below
	dropConfirm   map[uint64]bool
	dropNext      int // confirms still to drop, whatever their seq (DropNextConfirms)
	dropReturn    map[int]bool
	delay         [2]time.Duration // indexed by dirIndex
	cut           *Match
	cutBefore     *Match
	cutBeforeDone chan struct{}
	forbid        []Match // Forbid: refused for good
	watch         func(Wire)
	events        []Event
	counts        Counts

	connsMu sync.Mutex
	conns   map[*conn]struct{}
	closed  bool
	nextID  int
}

// DefaultUpstream is the local RabbitMQ the lab runs against.
const DefaultUpstream = "127.0.0.1:5672"

// New listens on listenAddr ("" means 127.0.0.1:0, a free port) and relays
// every accepted connection to upstream ("" means DefaultUpstream).
func New(listenAddr, upstream string) (*Proxy, error) {
	if listenAddr == "" {
		listenAddr = "127.0.0.1:0"
	}
	if upstream == "" {
		upstream = DefaultUpstream
	}
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return nil, fmt.Errorf("amqpproxy: listen on %s: %w", listenAddr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		ln:          ln,
		upstream:    upstream,
		ctx:         ctx,
		cancel:      cancel,
		dropConfirm: map[uint64]bool{},
		dropReturn:  map[int]bool{},
		conns:       map[*conn]struct{}{},
	}
	p.wg.Add(1)
	go p.acceptLoop()
	return p, nil
}

// Addr is the host:port clients should dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL builds an amqp:// URL pointing at the proxy. The default vhost "/"
// (or "") yields no path, which amqp091-go maps to "/".
func (p *Proxy) URL(user, pass, vhost string) string {
	u := url.URL{Scheme: "amqp", User: url.UserPassword(user, pass), Host: p.Addr()}
	if vhost != "" && vhost != "/" {
		u.Path = "/" + vhost
		u.RawPath = "/" + url.PathEscape(vhost)
	}
	return u.String()
}

// Close stops listening, closes every proxied connection on both sides and
// waits for all proxy goroutines to exit. Calling it again is a no-op.
func (p *Proxy) Close() error {
	p.connsMu.Lock()
	if p.closed {
		p.connsMu.Unlock()
		return nil
	}
	p.closed = true
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.connsMu.Unlock()

	p.cancel()
	err := p.ln.Close()
	for _, c := range conns {
		c.shutdown()
	}
	p.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("amqpproxy: close listener %s: %w", p.ln.Addr(), err)
	}
	return nil
}

// CutAll closes every proxied connection on both sides now, and keeps
// listening: what a process's death does to its connections, done by the
// proxy for a process the lab cannot see die (a program on another
// machine). It returns how many it cut.
func (p *Proxy) CutAll() int {
	p.connsMu.Lock()
	conns := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.connsMu.Unlock()
	for _, c := range conns {
		c.shutdown()
	}
	return len(conns)
}

// DropConfirm makes the proxy swallow the broker's basic.ack/basic.nack for
// publish seq n (1-based, counted per channel from confirm.select) on every
// confirm-mode channel of every connection. When the broker confirms n
// inside a multiple=true ack, the proxy instead sends individual
// multiple=false confirms for the other outstanding seqs that ack covers, and
// keeps doing so for later multiple acks, because the client would otherwise
// treat n as confirmed. Calls accumulate until Reset.
func (p *Proxy) DropConfirm(n int) {
	if n < 1 {
		return
	}
	p.mu.Lock()
	p.dropConfirm[uint64(n)] = true
	p.mu.Unlock()
}

// DropNextConfirms makes the proxy swallow the next n confirms the broker
// sends, on whichever channel of whichever connection they come, with the
// same rewriting of multiple acks as DropConfirm. A fault schedule uses it
// where it cannot know each channel's publish count.
// A negative n takes back confirms still to drop.
func (p *Proxy) DropNextConfirms(n int) {
	p.mu.Lock()
	p.dropNext = max(0, p.dropNext+n)
	p.mu.Unlock()
}

// DropReturn swallows the nth basic.return (1-based) of each connection,
// together with its content header and body frames. Counting is per
// connection so the fault is reproducible no matter what other clients of
// the proxy do. Calls accumulate until Reset.
func (p *Proxy) DropReturn(n int) {
	if n < 1 {
		return
	}
	p.mu.Lock()
	p.dropReturn[n] = true
	p.mu.Unlock()
}

// Delay holds every frame read in direction dir for d before forwarding it;
// order is preserved and frames read later are not delayed by the wait of
// earlier ones beyond their own d. d <= 0 removes the delay for dir.
func (p *Proxy) Delay(d time.Duration, dir Direction) {
	if d < 0 {
		d = 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if dir&ToBroker != 0 {
		p.delay[dirIndex(ToBroker)] = d
	}
	if dir&ToClient != 0 {
		p.delay[dirIndex(ToClient)] = d
	}
}

// CutAfter closes both sides of the connection right after forwarding the
// next method frame matching m. It fires once (on whichever connection sees
// the frame first) so that a reconnecting client is not cut again; call it
// again to re-arm.
func (p *Proxy) CutAfter(m Match) {
	p.mu.Lock()
	p.cut = &m
	p.mu.Unlock()
}

// Reset clears all faults. The log and counts are kept; see ClearLog.
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropConfirm = map[uint64]bool{}
	p.dropNext = 0
	p.dropReturn = map[int]bool{}
	p.delay = [2]time.Duration{}
	p.cut = nil
	p.cutBefore, p.cutBeforeDone = nil, nil
}

// ClearLog empties the event log and zeroes the counts, e.g. between steps
// of a lesson.
func (p *Proxy) ClearLog() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = nil
	p.counts = Counts{}
}

// Events returns a copy of the wire log, oldest first. Method frames are
// always logged; heartbeats and content frames only when the proxy dropped
// them.
func (p *Proxy) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// Counts returns the totals since New or the last ClearLog.
func (p *Proxy) Counts() Counts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts
}

func dirIndex(d Direction) int {
	if d == ToClient {
		return 1
	}
	return 0
}

func (p *Proxy) delayFor(d Direction) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay[dirIndex(d)]
}

func (p *Proxy) shouldDropConfirm(seq uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dropConfirm[seq] {
		return true
	}
	if p.dropNext > 0 {
		p.dropNext--
		return true
	}
	return false
}

func (p *Proxy) shouldDropReturn(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropReturn[n]
}

// consumeCut reports whether the armed CutAfter matches and disarms it, so
// exactly one frame triggers a cut.
func (p *Proxy) consumeCut(dir Direction, class, method uint16) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut == nil || !p.cut.matches(dir, class, method) {
		return false
	}
	p.cut = nil
	return true
}

// record appends events and applies a counts delta in one critical section
// so Events and Counts stay consistent with each other.
func (p *Proxy) record(evs []Event, delta Counts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.events)+len(evs) > maxEvents {
		keep := maxEvents / 2
		if keep > len(p.events) {
			keep = len(p.events)
		}
		p.events = append([]Event(nil), p.events[len(p.events)-keep:]...)
	}
	p.events = append(p.events, evs...)
	p.counts.Connections += delta.Connections
	p.counts.Publishes += delta.Publishes
	p.counts.ConfirmsForwarded += delta.ConfirmsForwarded
	p.counts.ConfirmsDropped += delta.ConfirmsDropped
	p.counts.ReturnsForwarded += delta.ReturnsForwarded
	p.counts.ReturnsDropped += delta.ReturnsDropped
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		cc, err := p.ln.Accept()
		if err != nil {
			// The listener only fails permanently once Close has run;
			// transient accept errors are not expected on loopback.
			return
		}
		p.wg.Add(1)
		go p.serve(cc)
	}
}

// serve dials the upstream for one accepted client and runs the relay.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	d := net.Dialer{Timeout: 10 * time.Second}
	broker, err := d.DialContext(p.ctx, "tcp", p.upstream)
	if err != nil {
		client.Close()
		p.record([]Event{{Time: time.Now(), Note: fmt.Sprintf("dial upstream %s: %v", p.upstream, err)}}, Counts{})
		return
	}

	p.connsMu.Lock()
	if p.closed {
		p.connsMu.Unlock()
		client.Close()
		broker.Close()
		return
	}
	p.nextID++
	c := newConn(p, p.nextID, client, broker)
	p.conns[c] = struct{}{}
	p.connsMu.Unlock()

	p.record([]Event{{Time: time.Now(), Conn: c.id, Name: "connection accepted",
		Note: fmt.Sprintf("%s ⇄ %s", client.RemoteAddr(), p.upstream)}}, Counts{Connections: 1})
	c.run()
}

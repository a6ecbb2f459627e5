package amqpproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// conn is one proxied client connection and its upstream.
//
// Each direction runs a reader goroutine (parse, decide, update state) and a
// writer goroutine (wait out any Delay, write). Splitting them lets frames
// that arrive during a delay be read on time, so Delay(d) shifts every frame
// by d instead of accumulating d per frame.
type conn struct {
	p      *Proxy
	id     int
	client net.Conn
	broker net.Conn
	done   chan struct{} // closed by shutdown
	once   sync.Once

	// mu guards the protocol state shared by the two directions: a
	// publish is read client→broker and its confirm broker→client.
	mu      sync.Mutex
	chans   map[uint16]*chanState
	returns int // basic.returns seen on this connection
}

// chanState is the confirm and content bookkeeping for one channel.
type chanState struct {
	confirm     bool
	seq         uint64          // seq of the last publish since confirm.select
	outstanding []uint64        // unconfirmed seqs, ascending
	dropped     map[uint64]bool // seqs whose confirm the proxy swallowed; the client still waits for them

	// Dropping a basic.return also drops its content frames.
	skipping    bool
	awaitHeader bool
	skipBody    uint64

	watchPending *Wire // a publish or deliver waiting for its content header (Watch)
	cutOnHeader  bool  // CutBefore matched a publish: cut at its header, so the watcher learns its message id

	// The seqs the last confirm covered, forwarded and swallowed, for the
	// watcher: a confirm the client never read is no confirm.
	confirmKeep, confirmDrop []uint64
}

// chunk is one unit of output for a writer.
type chunk struct {
	data []byte
	due  time.Time
	cut  bool // close the connection after writing this chunk
}

// queueLen bounds buffered output per direction; a full queue blocks the
// reader and so pushes back on the sender through TCP.
const queueLen = 256

func newConn(p *Proxy, id int, client, broker net.Conn) *conn {
	return &conn{
		p:      p,
		id:     id,
		client: client,
		broker: broker,
		done:   make(chan struct{}),
		chans:  map[uint16]*chanState{},
	}
}

// run relays until either side closes, then returns once all four relay
// goroutines have finished.
func (c *conn) run() {
	var wg sync.WaitGroup
	toBroker := make(chan chunk, queueLen)
	toClient := make(chan chunk, queueLen)
	wg.Add(4)
	go func() { defer wg.Done(); c.readLoop(ToBroker, c.client, toBroker) }()
	go func() { defer wg.Done(); c.writeLoop(ToBroker, c.broker, toBroker) }()
	go func() { defer wg.Done(); c.readLoop(ToClient, c.broker, toClient) }()
	go func() { defer wg.Done(); c.writeLoop(ToClient, c.client, toClient) }()
	wg.Wait()
	c.shutdown()
}

// shutdown closes both sockets, which unblocks every goroutine of c; a
// proxy must never leave one half of a session open.
func (c *conn) shutdown() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.broker.Close()
		c.p.connsMu.Lock()
		delete(c.p.conns, c)
		c.p.connsMu.Unlock()
	})
}

func (c *conn) closing() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *conn) readLoop(dir Direction, src net.Conn, q chan<- chunk) {
	defer close(q)
	br := bufio.NewReaderSize(src, 64<<10)
	send := func(ch chunk) bool {
		select {
		case q <- ch:
			return true
		case <-c.done:
			return false
		}
	}

	// The protocol header has no frame structure. The client always sends
	// one; the broker only sends one to reject the client's version.
	if hdr, err := c.readProtocolHeader(dir, br); err != nil {
		c.noteEnd(dir, fmt.Errorf("reading protocol header: %w", err))
		return
	} else if hdr != nil {
		c.p.record([]Event{{Time: time.Now(), Conn: c.id, Dir: dir, Name: fmt.Sprintf("protocol-header %q", hdr)}}, Counts{})
		if !send(chunk{data: hdr, due: time.Now().Add(c.p.delayFor(dir))}) {
			return
		}
	}

	for {
		f, raw, err := readRawFrame(br)
		if err != nil {
			c.noteEnd(dir, err)
			return
		}
		read := time.Now()
		outs, cut, delay := c.handle(dir, f, raw, read)
		for i, o := range outs {
			if !send(chunk{data: o, due: read.Add(delay), cut: cut && i == len(outs)-1}) {
				return
			}
		}
	}
}

func (c *conn) readProtocolHeader(dir Direction, br *bufio.Reader) ([]byte, error) {
	if dir == ToClient {
		b, err := br.Peek(1)
		if err != nil || b[0] != 'A' {
			return nil, nil // let the frame loop report the error, if any
		}
	}
	hdr := make([]byte, len(ProtocolHeader))
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, err
	}
	return hdr, nil
}

// noteEnd logs why a direction stopped, unless the proxy itself closed it.
func (c *conn) noteEnd(dir Direction, err error) {
	if c.closing() {
		return
	}
	note := sayClosedByPeer.F()
	if !errors.Is(err, io.EOF) {
		note = err.Error()
	}
	c.p.record([]Event{{Time: time.Now(), Conn: c.id, Dir: dir, Name: "end of stream", Note: note}}, Counts{})
}

func (c *conn) writeLoop(dir Direction, dst net.Conn, q <-chan chunk) {
	defer c.shutdown()
	bw := bufio.NewWriterSize(dst, 64<<10)
	for {
		var ch chunk
		var ok bool
		select {
		case ch, ok = <-q:
		case <-c.done:
			return
		}
		if !ok {
			// Reader hit EOF: deliver what is left, then close both sides.
			bw.Flush()
			return
		}
		if wait := time.Until(ch.due); wait > 0 {
			if bw.Flush() != nil {
				return
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.done:
				t.Stop()
				return
			}
		}
		if _, err := bw.Write(ch.data); err != nil {
			return
		}
		// Batch frames that are already queued; flush when idle.
		if ch.cut || len(q) == 0 {
			if bw.Flush() != nil {
				return
			}
		}
		if ch.cut {
			c.p.record([]Event{{Time: time.Now(), Conn: c.id, Dir: dir, Name: "connection cut", Note: sayCutMatched.F()}}, Counts{})
			return
		}
	}
}

func (c *conn) chanState(ch uint16) *chanState {
	st := c.chans[ch]
	if st == nil {
		st = &chanState{dropped: map[uint64]bool{}}
		c.chans[ch] = st
	}
	return st
}

// handle decides what to forward for one frame read in direction dir and
// updates the channel state. It returns the byte slices to write (raw
// itself when the frame is untouched), whether to cut the connection after
// them, and the delay to apply.
func (c *conn) handle(dir Direction, f Frame, raw []byte, now time.Time) (outs [][]byte, cut bool, delay time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()

	delay = c.p.delayFor(dir)
	var delta Counts
	ev := Event{Time: now, Conn: c.id, Dir: dir, Channel: f.Channel, Name: f.Name()}
	var evs []Event
	logged := f.Type == FrameMethod
	outs = [][]byte{raw}

	class, method, isMethod := f.Method()
	var st *chanState
	if f.Channel != 0 {
		st = c.chanState(f.Channel)
	}

	watch := c.p.watcher()
	switch {
	case isMethod && c.p.forbidden(dir, class, method):
		ev.Dropped, ev.Note = true, sayForbid.F()
		c.p.record([]Event{ev}, delta)
		if watch != nil {
			watch(Wire{Time: now, Conn: c.id, Dir: dir, Channel: f.Channel, Op: "forbidden", Method: MethodName(class, method), Cut: true})
		}
		return [][]byte{nil}, true, 0

	case isMethod && c.p.consumeCutBefore(dir, class, method):
		ev.Dropped, ev.Note = true, sayCutBefore.F()
		c.p.record([]Event{ev}, delta)
		if st != nil && dir == ToBroker && class == ClassBasic && method == MethodBasicPublish {
			st.cutOnHeader = true
			if watch != nil {
				st.watchPending = &Wire{Time: now, Conn: c.id, Dir: dir, Channel: f.Channel, Op: "publish", Cut: true}
			}
			return nil, false, 0
		}
		if watch != nil {
			w := Wire{Time: now, Conn: c.id, Dir: dir, Channel: f.Channel, Cut: true}
			if tag, multiple, _, ok := f.AckArgs(); ok && class == ClassBasic {
				w.Tag, w.Multiple = tag, multiple
				w.Op = map[uint16]string{MethodBasicAck: "ack", MethodBasicNack: "nack", MethodBasicReject: "reject"}[method]
				if dir == ToClient {
					w.Op = "confirm"
				}
				watch(w)
			}
		}
		return [][]byte{nil}, true, 0

	case st != nil && st.cutOnHeader && f.Type == FrameHeader:
		st.cutOnHeader = false
		if watch != nil {
			c.watchFrame(st, dir, f, now, watch)
		}
		return [][]byte{nil}, true, 0

	case st != nil && st.cutOnHeader:
		return nil, false, 0

	case st != nil && st.skipping && dir == ToClient && !isMethod:
		c.skipContent(st, f)
		ev.Dropped, ev.Note = true, sayDroppedContent.F()
		logged, outs = true, nil

	case !isMethod:
		// Heartbeats and content frames pass through untouched.

	case class == ClassChannel && (method == MethodChannelOpen || method == MethodChannelClose || method == MethodChannelCloseOk):
		// A reopened channel number starts a fresh confirm sequence.
		delete(c.chans, f.Channel)

	case dir == ToBroker && class == ClassConfirm && method == MethodConfirmSelect:
		if !st.confirm {
			st.confirm = true
			ev.Note = sayConfirmMode.F()
		}

	case dir == ToBroker && class == ClassBasic && method == MethodBasicPublish:
		delta.Publishes++
		if st.confirm {
			st.seq++
			st.outstanding = append(st.outstanding, st.seq)
			ev.Name += fmt.Sprintf(" seq=%d", st.seq)
		}

	case dir == ToClient && class == ClassBasic && (method == MethodBasicAck || method == MethodBasicNack) && st.confirm:
		outs, evs = c.confirm(st, f, raw, &ev, &delta)

	case dir == ToClient && class == ClassBasic && method == MethodBasicReturn:
		c.returns++
		if c.p.shouldDropReturn(c.returns) {
			st.skipping, st.awaitHeader, st.skipBody = true, true, 0
			ev.Dropped = true
			ev.Note = sayDropReturn.F(c.returns)
			delta.ReturnsDropped++
			outs = nil
		} else {
			delta.ReturnsForwarded++
		}
	}
	if isMethod && st != nil && st.skipping && !ev.Dropped {
		// A method frame ends any content sequence; stop skipping so a
		// malformed return cannot swallow the rest of the channel.
		st.skipping = false
	}

	if watch != nil {
		c.watchFrame(st, dir, f, now, watch)
	}
	if len(outs) > 0 && isMethod && c.p.consumeCut(dir, class, method) {
		cut = true
		ev.Note = joinNote(ev.Note, sayCutAfterFrame.F())
	}
	if delay > 0 && len(outs) > 0 {
		ev.Note = joinNote(ev.Note, sayDelayed.F(delay))
	}
	if logged {
		evs = append([]Event{ev}, evs...)
	}
	c.p.record(evs, delta)
	return outs, cut, delay
}

// skipContent consumes one header or body frame of a dropped return and
// ends skipping once the announced body size has been seen.
func (c *conn) skipContent(st *chanState, f Frame) {
	switch {
	case st.awaitHeader && f.Type == FrameHeader:
		size, _ := f.BodySize()
		st.awaitHeader, st.skipBody = false, size
		st.skipping = size > 0
	case !st.awaitHeader && f.Type == FrameBody:
		n := uint64(len(f.Payload))
		if n >= st.skipBody {
			st.skipBody = 0
			st.skipping = false
		} else {
			st.skipBody -= n
		}
	}
}

// confirm applies DropConfirm to a broker basic.ack/basic.nack on a
// confirm-mode channel. Single confirms for a dropped seq are swallowed. A
// multiple=true confirm that covers a seq to drop, or any seq dropped
// earlier, is rewritten into one multiple=false confirm per other covered
// outstanding seq: forwarding it as-is would let the client treat the
// dropped seq as confirmed.
func (c *conn) confirm(st *chanState, f Frame, raw []byte, ev *Event, delta *Counts) ([][]byte, []Event) {
	tag, multiple, requeue, _ := f.AckArgs()
	nack := f.Is(ClassBasic, MethodBasicNack)

	var covered []uint64
	if multiple {
		// Tag 0 with multiple means "everything outstanding".
		n := len(st.outstanding)
		if tag != 0 {
			n, _ = slices.BinarySearch(st.outstanding, tag+1)
		}
		covered = slices.Clone(st.outstanding[:n])
		st.outstanding = st.outstanding[n:]
	} else if i, found := slices.BinarySearch(st.outstanding, tag); found {
		covered = []uint64{tag}
		st.outstanding = slices.Delete(st.outstanding, i, i+1)
	}

	var keep, drop []uint64
	for _, seq := range covered {
		if c.p.shouldDropConfirm(seq) {
			drop = append(drop, seq)
			st.dropped[seq] = true
		} else {
			keep = append(keep, seq)
		}
	}
	st.confirmKeep, st.confirmDrop = keep, drop
	delta.ConfirmsDropped += len(drop)

	if !multiple {
		if len(drop) > 0 {
			ev.Dropped = true
			ev.Note = sayDropConfirm.F(tag)
			return nil, nil
		}
		delta.ConfirmsForwarded++
		return [][]byte{raw}, nil
	}

	earlier := false
	for seq := range st.dropped {
		if (tag == 0 || seq <= tag) && !slices.Contains(drop, seq) {
			earlier = true
			break
		}
	}
	if len(drop) == 0 && !earlier {
		delta.ConfirmsForwarded += len(covered)
		return [][]byte{raw}, nil
	}

	// Rewrite.
	ev.Dropped = true
	var why []string
	if len(drop) > 0 {
		why = append(why, "seq "+seqList(drop)+" dropped")
	}
	if earlier {
		why = append(why, "an earlier dropped seq must stay unconfirmed")
	}
	ev.Note = sayRewritten.F(seqList(keep), strings.Join(why, "; "))
	outs := make([][]byte, 0, len(keep))
	evs := make([]Event, 0, len(keep))
	for _, seq := range keep {
		var b []byte
		if nack {
			b = EncodeNack(f.Channel, seq, false, requeue)
		} else {
			b = EncodeAck(f.Channel, seq, false)
		}
		outs = append(outs, b)
		sf := Frame{Type: FrameMethod, Channel: f.Channel, Payload: b[7 : len(b)-1]}
		evs = append(evs, Event{Time: ev.Time, Conn: c.id, Dir: ToClient, Channel: f.Channel, Name: sf.Name(), Note: saySynthesized.F()})
	}
	delta.ConfirmsForwarded += len(keep)
	return outs, evs
}

func seqList(seqs []uint64) string {
	if len(seqs) == 0 {
		return "none"
	}
	parts := make([]string, len(seqs))
	for i, s := range seqs {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, ",")
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

package amqpproxy

import (
	"encoding/binary"
	"time"
)

// Wire is one thing a client did or was told, as the lab's history needs
// it: which message went where, which delivery was acked. A program the lab
// did not write cannot report what it does; its proxy can.
type Wire struct {
	Time        time.Time
	Conn        int
	Dir         Direction
	Channel     uint16
	Op          string // consume, publish, deliver, ack, nack, reject, confirm, confirm-nack, forbidden, refused
	Tag         uint64 // the delivery tag, or the publish seq in confirm mode
	Multiple    bool
	Redelivered bool
	NoAck       bool   // consume: the broker counts a message handled once it is sent
	MessageID   string // publish and deliver: the message-id property
	Queue       string // consume
	Cut         bool   // CutBefore or Forbid: the frame was not forwarded and the connection was closed instead
	Dropped     bool   // confirm: swallowed by DropConfirm; the publisher never read it
	Method      string // forbidden: the method refused, e.g. queue.purge; refused: the broker's reply text
}

// Watch calls fn with each Wire of every connection, from the proxy's
// reading goroutines (fn must be quick and safe for concurrent use). A
// publish or deliver is reported once its content header, which carries
// the message id, has been read.
func (p *Proxy) Watch(fn func(Wire)) {
	p.mu.Lock()
	p.watch = fn
	p.mu.Unlock()
}

func (p *Proxy) watcher() func(Wire) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watch
}

// CutBefore closes both sides of the connection instead of forwarding the
// next method frame matching m, so the frame never arrives: a consumer's
// ack the broker never sees, a publish the broker never stores, a confirm
// the publisher never reads. The returned channel is closed when it fired
// (never, if a later CutBefore replaced it or it was disarmed). Like
// CutAfter it fires once, on whichever connection sees the frame first.
func (p *Proxy) CutBefore(m Match) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutBefore, p.cutBeforeDone = &m, make(chan struct{})
	return p.cutBeforeDone
}

// Forbid makes the proxy refuse every method frame matching one of ms for
// as long as it runs: the frame is not forwarded, the connection closes,
// and the watcher gets a "forbidden" Wire naming the method. It is for what
// the broker's permissions cannot refuse (a consumer may purge the queue
// it reads).
func (p *Proxy) Forbid(ms ...Match) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forbid = append(p.forbid, ms...)
}

func (p *Proxy) forbidden(dir Direction, class, method uint16) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.forbid {
		if m.matches(dir, class, method) {
			return true
		}
	}
	return false
}

// Disarm takes back the CutBefore that returned fired, if it is still
// armed and has not fired; other faults stay.
func (p *Proxy) Disarm(fired <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutBeforeDone != nil && (<-chan struct{})(p.cutBeforeDone) == fired {
		p.cutBefore, p.cutBeforeDone = nil, nil
	}
}

func (p *Proxy) consumeCutBefore(dir Direction, class, method uint16) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutBefore == nil || !p.cutBefore.matches(dir, class, method) {
		return false
	}
	p.cutBefore = nil
	close(p.cutBeforeDone)
	p.cutBeforeDone = nil
	return true
}

// watchFrame turns a frame into a Wire for the watcher. A publish or
// deliver waits on its channel for the content header.
func (c *conn) watchFrame(st *chanState, dir Direction, f Frame, now time.Time, fn func(Wire)) {
	if dir == ToClient && f.Type == FrameMethod {
		// The broker refusing the login something (403 ACCESS_REFUSED)
		// closes the channel or the connection with why.
		if class, method, ok := f.Method(); ok && (class == ClassChannel && method == MethodChannelClose || class == ClassConnection && method == methodConnectionClose) {
			d := decoder{b: f.Payload[4:]}
			code := d.uint16()
			text := d.shortstr()
			if !d.bad && code == 403 {
				fn(Wire{Time: now, Conn: c.id, Dir: dir, Channel: f.Channel, Op: "refused", Method: text})
			}
		}
	}
	if st == nil {
		return
	}
	if f.Type == FrameHeader {
		if st.watchPending != nil {
			w := *st.watchPending
			st.watchPending = nil
			w.MessageID = messageID(f.Payload)
			fn(w)
		}
		return
	}
	class, method, ok := f.Method()
	if !ok || class != ClassBasic {
		return
	}
	w := Wire{Time: now, Conn: c.id, Dir: dir, Channel: f.Channel}
	args := f.Payload[4:]
	switch {
	case dir == ToBroker && method == MethodBasicConsume:
		// reserved(2) queue consumer-tag bits(no-local, no-ack, exclusive, no-wait)
		if len(args) < 2 {
			return
		}
		d := decoder{b: args[2:]}
		w.Queue = d.shortstr()
		d.shortstr()
		if d.bad || len(d.b) < 1 {
			return
		}
		w.Op, w.NoAck = "consume", d.b[0]&2 != 0
		fn(w)
	case dir == ToBroker && method == MethodBasicPublish:
		w.Op = "publish"
		if st.confirm {
			w.Tag = st.seq // handle counted it already
		}
		st.watchPending = &w
	case dir == ToClient && method == MethodBasicDeliver:
		// consumer-tag delivery-tag(8) redelivered(bit) exchange routing-key
		d := decoder{b: args}
		d.shortstr()
		w.Tag = d.uint64()
		if d.bad || len(d.b) < 1 {
			return
		}
		w.Op, w.Redelivered = "deliver", d.b[0]&1 != 0
		st.watchPending = &w
	case method == MethodBasicAck || method == MethodBasicNack || method == MethodBasicReject:
		tag, multiple, _, ok := f.AckArgs()
		if !ok {
			return
		}
		w.Tag, w.Multiple = tag, multiple
		w.Op = map[uint16]string{MethodBasicAck: "ack", MethodBasicNack: "nack", MethodBasicReject: "reject"}[method]
		if dir == ToClient {
			if !st.confirm {
				return
			}
			// One Wire per publish seq the confirm covered, each saying
			// whether the publisher read it.
			w.Op = map[string]string{"ack": "confirm", "nack": "confirm-nack"}[w.Op]
			w.Multiple = false
			keep, drop := st.confirmKeep, st.confirmDrop
			st.confirmKeep, st.confirmDrop = nil, nil
			for _, seq := range keep {
				w.Tag = seq
				fn(w)
			}
			for _, seq := range drop {
				w.Tag, w.Dropped = seq, true
				fn(w)
			}
			return
		}
		fn(w)
	}
}

// messageID reads the message-id property of a content header payload:
// class(2) weight(2) body-size(8) flags(2), then the properties whose flag
// bits are set, in order from bit 15.
func messageID(b []byte) string {
	if len(b) < 14 {
		return ""
	}
	flags := binary.BigEndian.Uint16(b[12:14])
	d := decoder{b: b[14:]}
	for bit := 15; bit >= 7; bit-- {
		if flags&(1<<bit) == 0 {
			continue
		}
		switch bit {
		case 15, 14, 10, 9, 8: // content-type, content-encoding, correlation-id, reply-to, expiration
			d.shortstr()
		case 13: // headers: a table, its size first
			if len(d.b) < 4 {
				return ""
			}
			n := int(binary.BigEndian.Uint32(d.b))
			if len(d.b) < 4+n {
				return ""
			}
			d.b = d.b[4+n:]
		case 12, 11: // delivery-mode, priority
			if len(d.b) < 1 {
				return ""
			}
			d.b = d.b[1:]
		case 7:
			s := d.shortstr()
			if d.bad {
				return ""
			}
			return s
		}
		if d.bad {
			return ""
		}
	}
	return ""
}

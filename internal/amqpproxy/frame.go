package amqpproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ProtocolHeader is what an AMQP 0-9-1 client sends before any frame.
const ProtocolHeader = "AMQP\x00\x00\x09\x01"

// Frame types and the frame-end octet from the AMQP 0-9-1 spec.
const (
	FrameMethod    byte = 1
	FrameHeader    byte = 2
	FrameBody      byte = 3
	FrameHeartbeat byte = 8
	FrameEnd       byte = 0xCE
)

// Class and method ids the proxy acts on.
const (
	ClassConnection uint16 = 10
	ClassChannel    uint16 = 20
	ClassExchange   uint16 = 40
	ClassQueue      uint16 = 50
	ClassBasic      uint16 = 60
	ClassConfirm    uint16 = 85
	ClassTx         uint16 = 90

	MethodChannelOpen    uint16 = 10
	MethodChannelClose   uint16 = 40
	MethodChannelCloseOk uint16 = 41

	MethodBasicConsume uint16 = 20
	MethodBasicPublish uint16 = 40
	MethodBasicReturn  uint16 = 50
	MethodBasicDeliver uint16 = 60
	MethodBasicAck     uint16 = 80
	MethodBasicReject  uint16 = 90
	MethodBasicNack    uint16 = 120

	MethodConfirmSelect   uint16 = 10
	MethodConfirmSelectOk uint16 = 11

	methodConnectionClose uint16 = 50

	MethodQueuePurge     uint16 = 30
	MethodQueueDelete    uint16 = 40
	MethodExchangeDelete uint16 = 20
)

// frameOverhead is type(1) + channel(2) + size(4) + frame-end(1).
const frameOverhead = 8

// MaxFrameSize bounds the payload ReadFrame accepts, so a corrupt size field
// cannot make the proxy allocate gigabytes. RabbitMQ's frame_max defaults to
// 128 KiB, so this is far above anything a real broker sends.
const MaxFrameSize = 64 << 20

// ErrFrameEnd reports a frame whose terminating octet is not 0xCE, which
// means the stream is out of sync and cannot be parsed further.
var ErrFrameEnd = errors.New("amqpproxy: bad frame-end octet")

// Frame is one AMQP 0-9-1 frame. Payload excludes the 7-byte header and the
// frame-end octet.
type Frame struct {
	Type    byte
	Channel uint16
	Payload []byte
}

// ReadFrame reads exactly one frame from r. It returns io.EOF only when r is
// exhausted on a frame boundary; a frame cut short yields
// io.ErrUnexpectedEOF, so callers can tell a clean close from a torn stream.
func ReadFrame(r *bufio.Reader) (Frame, error) {
	f, _, err := readRawFrame(r)
	return f, err
}

// readRawFrame also returns the frame's exact wire bytes so the proxy can
// forward untouched frames without re-encoding them. f.Payload aliases raw.
func readRawFrame(r *bufio.Reader) (Frame, []byte, error) {
	var hdr [7]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Frame{}, nil, err // io.EOF on a clean boundary
	}
	size := binary.BigEndian.Uint32(hdr[3:7])
	if size > MaxFrameSize {
		return Frame{}, nil, fmt.Errorf("amqpproxy: frame size %d exceeds limit %d (type %d, channel %d)",
			size, MaxFrameSize, hdr[0], binary.BigEndian.Uint16(hdr[1:3]))
	}
	raw := make([]byte, frameOverhead+int(size))
	copy(raw, hdr[:])
	if _, err := io.ReadFull(r, raw[7:]); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Frame{}, nil, fmt.Errorf("amqpproxy: reading %d-byte frame payload: %w", size, err)
	}
	if end := raw[len(raw)-1]; end != FrameEnd {
		return Frame{}, nil, fmt.Errorf("%w: got 0x%02x after %d-byte payload", ErrFrameEnd, end, size)
	}
	f := Frame{
		Type:    raw[0],
		Channel: binary.BigEndian.Uint16(raw[1:3]),
		Payload: raw[7 : 7+size],
	}
	return f, raw, nil
}

// Bytes encodes f for the wire. Encoding is deterministic, so for a frame
// returned by ReadFrame it reproduces the original bytes exactly.
func (f Frame) Bytes() []byte {
	b := make([]byte, frameOverhead+len(f.Payload))
	b[0] = f.Type
	binary.BigEndian.PutUint16(b[1:3], f.Channel)
	binary.BigEndian.PutUint32(b[3:7], uint32(len(f.Payload)))
	copy(b[7:], f.Payload)
	b[len(b)-1] = FrameEnd
	return b
}

// Method returns the class and method ids of a method frame.
func (f Frame) Method() (class, method uint16, ok bool) {
	if f.Type != FrameMethod || len(f.Payload) < 4 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint16(f.Payload[0:2]), binary.BigEndian.Uint16(f.Payload[2:4]), true
}

// Is reports whether f is the method class.method.
func (f Frame) Is(class, method uint16) bool {
	c, m, ok := f.Method()
	return ok && c == class && m == method
}

// BodySize returns the body-size field of a content header frame, which is
// how many body-frame bytes follow it on the same channel.
func (f Frame) BodySize() (uint64, bool) {
	// class-id(2) weight(2) body-size(8)
	if f.Type != FrameHeader || len(f.Payload) < 12 {
		return 0, false
	}
	return binary.BigEndian.Uint64(f.Payload[4:12]), true
}

// AckArgs decodes basic.ack / basic.nack / basic.reject arguments. requeue is
// only meaningful for nack and reject; for reject multiple is always false.
func (f Frame) AckArgs() (tag uint64, multiple, requeue bool, ok bool) {
	c, m, isMethod := f.Method()
	if !isMethod || c != ClassBasic || len(f.Payload) < 13 {
		return 0, false, false, false
	}
	tag = binary.BigEndian.Uint64(f.Payload[4:12])
	bits := f.Payload[12]
	switch m {
	case MethodBasicAck:
		return tag, bits&1 != 0, false, true
	case MethodBasicNack:
		return tag, bits&1 != 0, bits&2 != 0, true
	case MethodBasicReject:
		return tag, false, bits&1 != 0, true
	}
	return 0, false, false, false
}

// EncodeAck builds a basic.ack method frame; the proxy uses it to split a
// multiple=true ack into per-seq acks.
func EncodeAck(channel uint16, tag uint64, multiple bool) []byte {
	var bits byte
	if multiple {
		bits |= 1
	}
	return encodeAckLike(channel, MethodBasicAck, tag, bits)
}

// EncodeNack builds a basic.nack method frame.
func EncodeNack(channel uint16, tag uint64, multiple, requeue bool) []byte {
	var bits byte
	if multiple {
		bits |= 1
	}
	if requeue {
		bits |= 2
	}
	return encodeAckLike(channel, MethodBasicNack, tag, bits)
}

func encodeAckLike(channel, method uint16, tag uint64, bits byte) []byte {
	p := make([]byte, 13)
	binary.BigEndian.PutUint16(p[0:2], ClassBasic)
	binary.BigEndian.PutUint16(p[2:4], method)
	binary.BigEndian.PutUint64(p[4:12], tag)
	p[12] = bits
	return Frame{Type: FrameMethod, Channel: channel, Payload: p}.Bytes()
}

var methodNames = map[[2]uint16]string{
	{10, 10}: "connection.start", {10, 11}: "connection.start-ok",
	{10, 20}: "connection.secure", {10, 21}: "connection.secure-ok",
	{10, 30}: "connection.tune", {10, 31}: "connection.tune-ok",
	{10, 40}: "connection.open", {10, 41}: "connection.open-ok",
	{10, 50}: "connection.close", {10, 51}: "connection.close-ok",
	{10, 60}: "connection.blocked", {10, 61}: "connection.unblocked",
	{10, 70}: "connection.update-secret", {10, 71}: "connection.update-secret-ok",
	{20, 10}: "channel.open", {20, 11}: "channel.open-ok",
	{20, 20}: "channel.flow", {20, 21}: "channel.flow-ok",
	{20, 40}: "channel.close", {20, 41}: "channel.close-ok",
	{40, 10}: "exchange.declare", {40, 11}: "exchange.declare-ok",
	{40, 20}: "exchange.delete", {40, 21}: "exchange.delete-ok",
	{40, 30}: "exchange.bind", {40, 31}: "exchange.bind-ok",
	{40, 40}: "exchange.unbind", {40, 51}: "exchange.unbind-ok",
	{50, 10}: "queue.declare", {50, 11}: "queue.declare-ok",
	{50, 20}: "queue.bind", {50, 21}: "queue.bind-ok",
	{50, 30}: "queue.purge", {50, 31}: "queue.purge-ok",
	{50, 40}: "queue.delete", {50, 41}: "queue.delete-ok",
	{50, 50}: "queue.unbind", {50, 51}: "queue.unbind-ok",
	{60, 10}: "basic.qos", {60, 11}: "basic.qos-ok",
	{60, 20}: "basic.consume", {60, 21}: "basic.consume-ok",
	{60, 30}: "basic.cancel", {60, 31}: "basic.cancel-ok",
	{60, 40}: "basic.publish", {60, 50}: "basic.return",
	{60, 60}: "basic.deliver", {60, 70}: "basic.get",
	{60, 71}: "basic.get-ok", {60, 72}: "basic.get-empty",
	{60, 80}: "basic.ack", {60, 90}: "basic.reject",
	{60, 100}: "basic.recover-async", {60, 110}: "basic.recover",
	{60, 111}: "basic.recover-ok", {60, 120}: "basic.nack",
	{85, 10}: "confirm.select", {85, 11}: "confirm.select-ok",
	{90, 10}: "tx.select", {90, 11}: "tx.select-ok",
	{90, 20}: "tx.commit", {90, 21}: "tx.commit-ok",
	{90, 30}: "tx.rollback", {90, 31}: "tx.rollback-ok",
}

// MethodName returns the spec name of class.method, e.g. "basic.ack".
func MethodName(class, method uint16) string {
	if n, ok := methodNames[[2]uint16{class, method}]; ok {
		return n
	}
	return fmt.Sprintf("method(%d.%d)", class, method)
}

// Name renders f for humans, including the arguments that matter for the
// lessons (delivery tags, routing, reply codes).
func (f Frame) Name() string {
	switch f.Type {
	case FrameHeartbeat:
		return "heartbeat"
	case FrameHeader:
		if n, ok := f.BodySize(); ok {
			return fmt.Sprintf("content-header body-size=%d", n)
		}
		return "content-header"
	case FrameBody:
		return fmt.Sprintf("content-body %d bytes", len(f.Payload))
	case FrameMethod:
	default:
		return fmt.Sprintf("frame(type=%d)", f.Type)
	}
	c, m, ok := f.Method()
	if !ok {
		return "method(truncated)"
	}
	name := MethodName(c, m)
	args := f.Payload[4:]
	switch {
	case c == ClassBasic && (m == MethodBasicAck || m == MethodBasicNack || m == MethodBasicReject):
		tag, multiple, requeue, ok := f.AckArgs()
		if !ok {
			return name
		}
		switch m {
		case MethodBasicAck:
			return fmt.Sprintf("%s tag=%d multiple=%t", name, tag, multiple)
		case MethodBasicNack:
			return fmt.Sprintf("%s tag=%d multiple=%t requeue=%t", name, tag, multiple, requeue)
		default:
			return fmt.Sprintf("%s tag=%d requeue=%t", name, tag, requeue)
		}
	case c == ClassBasic && m == MethodBasicPublish:
		// reserved-1(2) exchange(shortstr) routing-key(shortstr) bits
		if len(args) < 2 {
			return name
		}
		d := decoder{b: args[2:]}
		ex, rk := d.shortstr(), d.shortstr()
		if d.bad {
			return name
		}
		return fmt.Sprintf("%s exchange=%q routing-key=%q", name, ex, rk)
	case c == ClassBasic && m == MethodBasicReturn:
		// reply-code(2) reply-text exchange routing-key
		d := decoder{b: args}
		code := d.uint16()
		text, ex, rk := d.shortstr(), d.shortstr(), d.shortstr()
		if d.bad {
			return name
		}
		return fmt.Sprintf("%s %d %s exchange=%q routing-key=%q", name, code, text, ex, rk)
	case c == ClassBasic && m == MethodBasicDeliver:
		// consumer-tag delivery-tag(8) ...
		d := decoder{b: args}
		d.shortstr()
		tag := d.uint64()
		if d.bad {
			return name
		}
		return fmt.Sprintf("%s tag=%d", name, tag)
	case c == ClassChannel && m == MethodChannelClose, c == ClassConnection && m == 50:
		d := decoder{b: args}
		code := d.uint16()
		text := d.shortstr()
		if d.bad {
			return name
		}
		return fmt.Sprintf("%s %d %s", name, code, text)
	}
	return name
}

// decoder reads method arguments; a short buffer sets bad instead of
// panicking, since Name must cope with arbitrary captured bytes.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uint16() uint16 {
	if len(d.b) < 2 {
		d.bad = true
		return 0
	}
	v := binary.BigEndian.Uint16(d.b)
	d.b = d.b[2:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.bad = true
		return 0
	}
	v := binary.BigEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) shortstr() string {
	if len(d.b) < 1 || len(d.b) < 1+int(d.b[0]) {
		d.bad = true
		return ""
	}
	n := int(d.b[0])
	s := string(d.b[1 : 1+n])
	d.b = d.b[1+n:]
	return s
}

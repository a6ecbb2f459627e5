package amqpproxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// --- frame builders shared by the unit tests ---

func methodFrame(ch, class, method uint16, args ...[]byte) []byte {
	p := binary.BigEndian.AppendUint16(nil, class)
	p = binary.BigEndian.AppendUint16(p, method)
	for _, a := range args {
		p = append(p, a...)
	}
	return Frame{Type: FrameMethod, Channel: ch, Payload: p}.Bytes()
}

func shortstr(s string) []byte { return append([]byte{byte(len(s))}, s...) }

func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

func headerFrame(ch uint16, bodySize uint64) []byte {
	p := binary.BigEndian.AppendUint16(nil, ClassBasic)
	p = binary.BigEndian.AppendUint16(p, 0) // weight
	p = binary.BigEndian.AppendUint64(p, bodySize)
	p = binary.BigEndian.AppendUint16(p, 0x1000) // property flags: delivery-mode
	p = append(p, 2)                             // persistent
	return Frame{Type: FrameHeader, Channel: ch, Payload: p}.Bytes()
}

func bodyFrame(ch uint16, body string) []byte {
	return Frame{Type: FrameBody, Channel: ch, Payload: []byte(body)}.Bytes()
}

func heartbeatFrame() []byte { return Frame{Type: FrameHeartbeat}.Bytes() }

// publishFrames is basic.publish + header + one body frame.
func publishFrames(ch uint16, rk, body string) []byte {
	b := methodFrame(ch, ClassBasic, MethodBasicPublish, u16(0), shortstr(""), shortstr(rk), []byte{0})
	b = append(b, headerFrame(ch, uint64(len(body)))...)
	return append(b, bodyFrame(ch, body)...)
}

// returnFrames is basic.return + header + the body split into the given
// body frames.
func returnFrames(ch uint16, rk string, bodyParts ...string) []byte {
	size := 0
	for _, s := range bodyParts {
		size += len(s)
	}
	b := methodFrame(ch, ClassBasic, MethodBasicReturn, u16(312), shortstr("NO_ROUTE"), shortstr("ex"), shortstr(rk))
	b = append(b, headerFrame(ch, uint64(size))...)
	for _, s := range bodyParts {
		b = append(b, bodyFrame(ch, s)...)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// --- ReadFrame / encoding ---

func TestReadFrameParsesMethodFrameAndReencodesIdentically(t *testing.T) {
	wire := EncodeAck(7, 3, true)
	f, err := ReadFrame(bufio.NewReader(bytes.NewReader(wire)))
	if err != nil {
		t.Fatalf("ReadFrame: %v", err)
	}
	if f.Type != FrameMethod || f.Channel != 7 {
		t.Fatalf("got type %d channel %d, want 1/7", f.Type, f.Channel)
	}
	class, method, ok := f.Method()
	if !ok || class != 60 || method != 80 {
		t.Fatalf("Method() = %d,%d,%t want 60,80,true", class, method, ok)
	}
	tag, multiple, _, ok := f.AckArgs()
	if !ok || tag != 3 || !multiple {
		t.Fatalf("AckArgs() = %d,%t,%t", tag, multiple, ok)
	}
	if got := f.Name(); got != "basic.ack tag=3 multiple=true" {
		t.Fatalf("Name() = %q", got)
	}
	if !bytes.Equal(f.Bytes(), wire) {
		t.Fatalf("Bytes() = %x, want %x", f.Bytes(), wire)
	}
}

func TestEncodeAckAndNackProduceExactWireBytes(t *testing.T) {
	wantAck := []byte{1, 0, 1, 0, 0, 0, 13, 0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0xCE}
	if got := EncodeAck(1, 3, false); !bytes.Equal(got, wantAck) {
		t.Fatalf("EncodeAck = % x\nwant        % x", got, wantAck)
	}
	wantNack := []byte{1, 0, 2, 0, 0, 0, 13, 0, 60, 0, 120, 0, 0, 0, 0, 0, 0, 1, 0, 3, 0xCE}
	if got := EncodeNack(2, 256, true, true); !bytes.Equal(got, wantNack) {
		t.Fatalf("EncodeNack = % x\nwant         % x", got, wantNack)
	}
}

func TestReadFrameReassemblesFramesSplitAcrossReads(t *testing.T) {
	stream := cat(publishFrames(1, "q", "hello world"), heartbeatFrame(), EncodeAck(1, 1, false))
	// OneByteReader delivers one byte per Read, like a maximally
	// fragmented TCP stream.
	r := bufio.NewReaderSize(iotest.OneByteReader(bytes.NewReader(stream)), 16)
	var got []byte
	var types []byte
	for {
		f, err := ReadFrame(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("ReadFrame: %v", err)
		}
		types = append(types, f.Type)
		got = append(got, f.Bytes()...)
	}
	if !bytes.Equal(types, []byte{1, 2, 3, 8, 1}) {
		t.Fatalf("frame types = %v", types)
	}
	if !bytes.Equal(got, stream) {
		t.Fatalf("reassembled stream differs")
	}
}

func TestReadFrameReadsSeveralFramesDeliveredInOneRead(t *testing.T) {
	stream := cat(EncodeAck(1, 1, false), EncodeAck(1, 2, false), EncodeAck(2, 9, true))
	r := bufio.NewReader(bytes.NewReader(stream))
	for i, want := range []struct {
		ch  uint16
		tag uint64
	}{{1, 1}, {1, 2}, {2, 9}} {
		f, err := ReadFrame(r)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		tag, _, _, _ := f.AckArgs()
		if f.Channel != want.ch || tag != want.tag {
			t.Fatalf("frame %d: channel %d tag %d, want %d %d", i, f.Channel, tag, want.ch, want.tag)
		}
	}
	if _, err := ReadFrame(r); !errors.Is(err, io.EOF) {
		t.Fatalf("after last frame: err = %v, want io.EOF", err)
	}
}

func TestReadFrameReportsTruncatedFrameAsUnexpectedEOF(t *testing.T) {
	wire := EncodeAck(1, 1, false)
	_, err := ReadFrame(bufio.NewReader(bytes.NewReader(wire[:len(wire)-3])))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestReadFrameRejectsBadFrameEndOctet(t *testing.T) {
	wire := EncodeAck(1, 1, false)
	wire[len(wire)-1] = 0x00
	_, err := ReadFrame(bufio.NewReader(bytes.NewReader(wire)))
	if !errors.Is(err, ErrFrameEnd) {
		t.Fatalf("err = %v, want ErrFrameEnd", err)
	}
}

func TestFrameNameDecodesPublishAndReturnArguments(t *testing.T) {
	r := bufio.NewReader(bytes.NewReader(cat(publishFrames(1, "orders", "x"), returnFrames(1, "orders", "x"))))
	var names []string
	for {
		f, err := ReadFrame(r)
		if err != nil {
			break
		}
		names = append(names, f.Name())
	}
	want := []string{
		`basic.publish exchange="" routing-key="orders"`,
		"content-header body-size=1",
		"content-body 1 bytes",
		`basic.return 312 NO_ROUTE exchange="ex" routing-key="orders"`,
		"content-header body-size=1",
		"content-body 1 bytes",
	}
	if len(names) != len(want) {
		t.Fatalf("names = %q", names)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("frame %d name = %q, want %q", i, names[i], want[i])
		}
	}
}

package amqpproxy

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"
)

// harness wires client ⇄ Proxy ⇄ fake broker, all on loopback, so the
// forwarding logic can be fed exact byte streams.
type harness struct {
	p      *Proxy
	client net.Conn // plays the AMQP client
	broker net.Conn // plays RabbitMQ
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake broker listen: %v", err)
	}
	defer ln.Close()
	p, err := New("", ln.Addr().String())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	client, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("dial proxy: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(5 * time.Second))
	broker, err := ln.Accept()
	if err != nil {
		t.Fatalf("fake broker accept: %v", err)
	}
	t.Cleanup(func() { broker.Close() })
	return &harness{p: p, client: client, broker: broker}
}

// writeChunked writes b in random small pieces so frames straddle TCP
// segments and several frames share one segment.
// Write errors are ignored: it runs in its own goroutine and the reading
// side of each test reports missing bytes.
func writeChunked(c net.Conn, b []byte, rng *rand.Rand) {
	for len(b) > 0 {
		n := min(1+rng.IntN(40), len(b))
		if _, err := c.Write(b[:n]); err != nil {
			return
		}
		b = b[n:]
	}
}

func readExactly(t *testing.T, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return buf
}

func assertEqualBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differ:\n got  % x\n want % x", what, got, want)
	}
}

// assertClosed checks that c reaches EOF (or reset) without further data.
func assertClosed(t *testing.T, what string, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if len(b) > 0 {
		t.Fatalf("%s: unexpected extra bytes % x", what, b)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: still open after 5s", what)
	}
}

// confirmSetup is a client stream that opens channel 1, enables confirms
// and publishes n messages (seqs 1..n).
func confirmSetup(n int) []byte {
	b := cat([]byte(ProtocolHeader),
		methodFrame(1, ClassChannel, MethodChannelOpen, shortstr("")),
		methodFrame(1, ClassConfirm, MethodConfirmSelect, []byte{0}))
	for i := range n {
		b = append(b, publishFrames(1, "q", strings.Repeat("m", i+1))...)
	}
	return b
}

// sendToBroker writes from the client and waits until the fake broker has
// it all, which guarantees the proxy has processed those frames.
func (h *harness) sendToBroker(t *testing.T, b []byte) {
	t.Helper()
	go writeChunked(h.client, b, rand.New(rand.NewPCG(1, 2)))
	assertEqualBytes(t, "bytes at broker", readExactly(t, h.broker, len(b)), b)
}

func TestForwardsUnrelatedConstructedStreamByteIdenticalBothWays(t *testing.T) {
	h := newHarness(t)
	toBroker := cat([]byte(ProtocolHeader),
		methodFrame(0, ClassConnection, 11, []byte("opaque start-ok args")),
		methodFrame(1, ClassChannel, MethodChannelOpen, shortstr("")),
		methodFrame(1, ClassQueue, 10, u16(0), shortstr("q"), []byte{0, 0, 0, 0, 0}),
		publishFrames(1, "q", "not in confirm mode"),
		heartbeatFrame(),
		methodFrame(1, ClassBasic, MethodBasicAck, []byte{0, 0, 0, 0, 0, 0, 0, 5, 1}), // consumer ack
		Frame{Type: 99, Channel: 3, Payload: []byte("unknown frame type")}.Bytes(),
	)
	toClient := cat(
		methodFrame(0, ClassConnection, 10, []byte("opaque start args")),
		methodFrame(2, ClassBasic, MethodBasicDeliver, shortstr("ctag"), []byte{0, 0, 0, 0, 0, 0, 0, 1, 0}, shortstr(""), shortstr("q")),
		headerFrame(2, 9), bodyFrame(2, "delivered"),
		returnFrames(1, "nowhere", "ret", "urned"), // forwarded: no DropReturn
		EncodeAck(1, 4, true),                      // not a confirm channel
		heartbeatFrame(),
	)
	rng := rand.New(rand.NewPCG(7, 7))
	go writeChunked(h.client, toBroker, rand.New(rand.NewPCG(1, 1)))
	go writeChunked(h.broker, toClient, rng)
	assertEqualBytes(t, "client→broker stream", readExactly(t, h.broker, len(toBroker)), toBroker)
	assertEqualBytes(t, "broker→client stream", readExactly(t, h.client, len(toClient)), toClient)
}

func TestDropConfirmRewritesMultipleAckIntoIndividualAcksSkippingDroppedSeq(t *testing.T) {
	h := newHarness(t)
	h.p.DropConfirm(2)
	h.sendToBroker(t, confirmSetup(3))

	selectOk := methodFrame(1, ClassConfirm, MethodConfirmSelectOk)
	go writeChunked(h.broker, cat(selectOk, EncodeAck(1, 3, true), heartbeatFrame()), rand.New(rand.NewPCG(3, 3)))

	want := cat(selectOk,
		[]byte{1, 0, 1, 0, 0, 0, 13, 0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0xCE}, // ack tag=1 multiple=false
		[]byte{1, 0, 1, 0, 0, 0, 13, 0, 60, 0, 80, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0xCE}, // ack tag=3 multiple=false
		heartbeatFrame(), // proves nothing else was emitted before it
	)
	assertEqualBytes(t, "bytes at client", readExactly(t, h.client, len(want)), want)

	c := h.p.Counts()
	if c.Publishes != 3 || c.ConfirmsForwarded != 2 || c.ConfirmsDropped != 1 {
		t.Fatalf("counts = %+v, want 3 publishes, 2 confirms forwarded, 1 dropped", c)
	}
}

func TestDropConfirmKeepsDroppedSeqUnconfirmedInLaterMultipleAck(t *testing.T) {
	h := newHarness(t)
	h.p.DropConfirm(2)
	h.sendToBroker(t, confirmSetup(4))

	go writeChunked(h.broker, cat(
		EncodeAck(1, 2, false), // dropped outright
		EncodeAck(1, 1, false), // forwarded as is
		EncodeAck(1, 4, true),  // covers 3,4 and, for the client, the still-pending 2
		heartbeatFrame(),
	), rand.New(rand.NewPCG(4, 4)))

	want := cat(EncodeAck(1, 1, false), EncodeAck(1, 3, false), EncodeAck(1, 4, false), heartbeatFrame())
	assertEqualBytes(t, "bytes at client", readExactly(t, h.client, len(want)), want)
}

func TestDropConfirmAppliesToNacksAndPreservesRequeueBit(t *testing.T) {
	h := newHarness(t)
	h.p.DropConfirm(2)
	h.sendToBroker(t, confirmSetup(3))

	go writeChunked(h.broker, cat(EncodeNack(1, 3, true, true), heartbeatFrame()), rand.New(rand.NewPCG(5, 5)))
	want := cat(EncodeNack(1, 1, false, true), EncodeNack(1, 3, false, true), heartbeatFrame())
	assertEqualBytes(t, "bytes at client", readExactly(t, h.client, len(want)), want)
}

func TestMultipleAckNotCoveringDroppedSeqIsForwardedUnchanged(t *testing.T) {
	h := newHarness(t)
	h.p.DropConfirm(5)
	h.sendToBroker(t, confirmSetup(3))

	want := cat(EncodeAck(1, 3, true), heartbeatFrame())
	go writeChunked(h.broker, want, rand.New(rand.NewPCG(6, 6)))
	assertEqualBytes(t, "bytes at client", readExactly(t, h.client, len(want)), want)
	if c := h.p.Counts(); c.ConfirmsForwarded != 3 || c.ConfirmsDropped != 0 {
		t.Fatalf("counts = %+v", c)
	}
}

func TestChannelReopenResetsConfirmSequenceAndDroppedState(t *testing.T) {
	h := newHarness(t)
	h.p.DropConfirm(1)
	h.sendToBroker(t, confirmSetup(1))
	go writeChunked(h.broker, cat(EncodeAck(1, 1, false), heartbeatFrame()), rand.New(rand.NewPCG(8, 8)))
	assertEqualBytes(t, "first lifetime", readExactly(t, h.client, len(heartbeatFrame())), heartbeatFrame())

	// Close and reopen channel 1; the broker restarts seqs at 1 and no
	// dropped seq of the old channel may affect the new one.
	h.p.Reset()
	h.sendToBroker(t, cat(
		methodFrame(1, ClassChannel, MethodChannelClose, u16(200), shortstr("bye"), u16(0), u16(0)),
		methodFrame(1, ClassChannel, MethodChannelOpen, shortstr("")),
		methodFrame(1, ClassConfirm, MethodConfirmSelect, []byte{0}),
		publishFrames(1, "q", "a"), publishFrames(1, "q", "b"),
	))
	want := cat(EncodeAck(1, 2, true), heartbeatFrame())
	go writeChunked(h.broker, want, rand.New(rand.NewPCG(9, 9)))
	assertEqualBytes(t, "second lifetime", readExactly(t, h.client, len(want)), want)
}

func TestDropReturnDropsMethodHeaderAndBodyFramesTogether(t *testing.T) {
	h := newHarness(t)
	h.p.DropReturn(1)
	h.p.DropReturn(3)

	deliver := cat(
		methodFrame(2, ClassBasic, MethodBasicDeliver, shortstr("ctag"), []byte{0, 0, 0, 0, 0, 0, 0, 1, 0}, shortstr(""), shortstr("q")),
		headerFrame(2, 3), bodyFrame(2, "abc"))
	ret1 := returnFrames(1, "r1", "first ", "part") // 2 body frames
	firstBody := bytes.Index(ret1, bodyFrame(1, "first "))
	lastBody := bytes.LastIndex(ret1, bodyFrame(1, "part"))
	ret2 := returnFrames(1, "r2", "kept")
	ret3 := returnFrames(1, "r3") // body-size 0: no body frames
	ack := EncodeAck(1, 1, false)

	toClient := cat(
		ret1[:lastBody], // return #1 method, header, first body frame
		deliver,         // another channel interleaves
		ret1[lastBody:], // last body frame of return #1
		ret2,            // return #2: forwarded
		ret3,            // return #3: dropped, header only
		ack,             // must survive right after an empty-body return
		heartbeatFrame(),
	)
	if firstBody < 0 || lastBody < 0 {
		t.Fatal("test stream construction failed")
	}
	go writeChunked(h.broker, toClient, rand.New(rand.NewPCG(10, 10)))
	want := cat(deliver, ret2, ack, heartbeatFrame())
	assertEqualBytes(t, "bytes at client", readExactly(t, h.client, len(want)), want)

	c := h.p.Counts()
	if c.ReturnsDropped != 2 || c.ReturnsForwarded != 1 {
		t.Fatalf("counts = %+v, want 2 returns dropped, 1 forwarded", c)
	}
	dropped := 0
	for _, e := range h.p.Events() {
		if e.Dropped {
			dropped++
		}
	}
	// return#1: method+header+2 bodies; return#3: method+header.
	if dropped != 6 {
		t.Fatalf("dropped events = %d, want 6; events:\n%v", dropped, h.p.Events())
	}
}

func TestCutAfterClosesBothSidesRightAfterForwardingMatchingFrame(t *testing.T) {
	h := newHarness(t)
	h.p.CutAfter(Match{Dir: ToClient, Class: ClassBasic, Method: MethodBasicAck})
	h.sendToBroker(t, confirmSetup(1))

	ack := EncodeAck(1, 1, false)
	go writeChunked(h.broker, cat(ack, heartbeatFrame()), rand.New(rand.NewPCG(11, 11)))
	assertEqualBytes(t, "bytes at client", readExactly(t, h.client, len(ack)), ack)
	assertClosed(t, "client side", h.client)
	assertClosed(t, "broker side", h.broker)
}

func TestDelayHoldsFramesAtLeastDAndPreservesOrder(t *testing.T) {
	h := newHarness(t)
	const d = 200 * time.Millisecond
	h.p.Delay(d, ToClient)
	frames := cat(EncodeAck(1, 1, false), EncodeAck(1, 2, false), heartbeatFrame())
	start := time.Now()
	if _, err := h.broker.Write(frames); err != nil {
		t.Fatal(err)
	}
	got := readExactly(t, h.client, len(frames))
	if el := time.Since(start); el < d {
		t.Fatalf("frames arrived after %v, want at least %v", el, d)
	}
	assertEqualBytes(t, "delayed frames", got, frames)
}

func TestCloseClosesProxiedConnectionsAndReturnsAfterGoroutinesExit(t *testing.T) {
	h := newHarness(t)
	h.p.Delay(time.Hour, ToClient) // a writer parked in a delay must still exit
	if _, err := h.broker.Write(heartbeatFrame()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h.p.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return: goroutines still running")
	}
	assertClosed(t, "client side", h.client)
	assertClosed(t, "broker side", h.broker)
	if err := h.p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := net.DialTimeout("tcp", h.p.Addr(), time.Second); err == nil {
		t.Fatal("proxy still accepting after Close")
	}
}

func TestURLOmitsPathForDefaultVhostAndEscapesOthers(t *testing.T) {
	p, err := New("", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got, want := p.URL("guest", "guest", "/"), "amqp://guest:guest@"+p.Addr(); got != want {
		t.Errorf("URL(/) = %q, want %q", got, want)
	}
	if got, want := p.URL("u", "p", "a/b"), "amqp://u:p@"+p.Addr()+"/a%2Fb"; got != want {
		t.Errorf("URL(a/b) = %q, want %q", got, want)
	}
}

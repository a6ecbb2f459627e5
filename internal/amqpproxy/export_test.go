package amqpproxy

import (
	"net"
	"testing"
)

// For the RabbitMQ tests, which live in package amqpproxy_test so that they
// can use the test harness (internal/labtest imports the lab's cleaner,
// which imports this package): the in-package client ⇄ Proxy ⇄ fake broker
// wiring and its byte helpers.

// NewHarness is newHarness's proxy and its two ends.
func NewHarness(t *testing.T) (p *Proxy, client, broker net.Conn) {
	h := newHarness(t)
	return h.p, h.client, h.broker
}

var (
	WriteChunked     = writeChunked
	ReadExactly      = readExactly
	AssertEqualBytes = assertEqualBytes
)

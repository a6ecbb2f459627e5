// Package broker is the lab's view of RabbitMQ itself: what a queue holds at
// this moment (ready, unacked, consumers), the topology the lessons declare
// and may delete again (only what the lab created, which it marks), and
// control over a local node the lab is allowed to restart.
package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
)

// Client keeps one AMQP connection for reading broker state and redials it
// when it is gone (a broker restart, a network cut). Every probe runs on its
// own channel, because a failed passive declare closes the channel it ran on.
//
// The dial runs beside its callers with an allowance of its own
// (DialAllowance): a caller whose deadline is shorter (the screen polls
// with 800 ms) stops waiting for it, but the handshake goes on, and the
// next caller waits on the same one. Cut at each caller's deadline, a
// loaded RabbitMQ's handshake (seen over 800 ms on 2 busy cores) was begun
// again at every poll and never finished.
type Client struct {
	url string

	mu      sync.Mutex
	conn    *amqp.Connection
	dialing chan struct{} // closed when the dial in progress ends; nil when none is
	dialErr error         // the last dial's failure
	unseen  bool          // dialErr came after its callers stopped waiting: the next one is told
	gen     int           // Close's count: a dial begun before a Close is discarded
}

// DialAllowance bounds one dial and handshake, whoever waits for it
// (services.DialAMQP's handshake limit, 4 s, is the tighter).
const DialAllowance = 10 * time.Second

// ErrHandshaking: the caller's deadline came while the client's dial was
// still under way; the dial goes on for the next caller.
var ErrHandshaking = errors.New("the connection's handshake is still under way")

// NewClient returns a client for the AMQP URL; it dials on first use.
func NewClient(url string) *Client { return &Client{url: url} }

// Conn returns a live connection, dialling when there is none.
func (c *Client) Conn(ctx context.Context) (*amqp.Connection, error) {
	c.mu.Lock()
	if c.conn != nil && !c.conn.IsClosed() {
		defer c.mu.Unlock()
		return c.conn, nil
	}
	if c.dialing == nil {
		c.dialing = make(chan struct{})
		go c.dial(c.dialing, c.gen)
		if c.unseen { // a failed handshake nobody waited for is said once
			c.unseen = false
			defer c.mu.Unlock()
			return nil, c.dialErr
		}
	}
	done := c.dialing
	c.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("connect to RabbitMQ at %s: %w (%v)", secret.URL(c.url), ErrHandshaking, ctx.Err())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && !c.conn.IsClosed() {
		return c.conn, nil
	}
	if c.dialErr != nil {
		c.unseen = false
		return nil, c.dialErr
	}
	return nil, fmt.Errorf("connect to RabbitMQ at %s: the client was closed during the handshake", secret.URL(c.url))
}

func (c *Client) dial(done chan struct{}, gen int) {
	ctx, cancel := context.WithTimeout(context.Background(), DialAllowance)
	defer cancel()
	start := time.Now()
	conn, err := services.DialAMQP(ctx, c.url)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer close(done)
	if c.dialing == done {
		c.dialing = nil
	}
	if err != nil {
		c.dialErr = fmt.Errorf("connect to RabbitMQ at %s (after %s): %w", secret.URL(c.url), time.Since(start).Round(time.Millisecond), err)
		c.unseen = true
		return
	}
	if gen != c.gen { // closed meanwhile
		conn.Close()
		return
	}
	c.conn, c.dialErr = conn, nil
}

// Probe runs f on a fresh channel and closes it. A channel error (404 for a
// missing queue) comes back as f's error; the connection stays usable.
// It returns ctx's error once ctx ends, whether or not f has.
func (c *Client) Probe(ctx context.Context, f func(*amqp.Channel) error) error {
	conn, err := c.Conn(ctx)
	if err != nil {
		return err
	}
	ch, err := conn.Channel()
	if err != nil {
		// The connection may have died between the check and the call.
		c.Close()
		if conn, err = c.Conn(ctx); err != nil {
			return err
		}
		if ch, err = conn.Channel(); err != nil {
			return fmt.Errorf("open a channel on RabbitMQ: %w", err)
		}
	}
	// amqp091's calls take no context: run f beside, and on ctx's end
	// leave it, closing its channel.
	done := make(chan error, 1)
	go func() { done <- f(ch) }()
	select {
	case err := <-done:
		ch.Close()
		return err
	case <-ctx.Done():
		// Not waited for: the broker answers channel.close only after the
		// call it holds (a minute, on 4.x, for a queue whose node is down).
		go ch.Close()
		return ctx.Err()
	}
}

// Close drops the connection; the next call dials again.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.dialing = nil // a dial under way is discarded; the next Conn begins its own
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// IsNotFound reports a 404 channel error (no such queue or exchange).
func IsNotFound(err error) bool {
	e, ok := err.(*amqp.Error)
	return ok && e.Code == amqp.NotFound
}

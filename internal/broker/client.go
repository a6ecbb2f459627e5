// Package broker is the lab's view of RabbitMQ itself: what a queue holds at
// this moment (ready, unacked, consumers), the topology the lessons declare
// and may delete again (only what the lab created, which it marks), and
// control over a local node the lab is allowed to restart.
package broker

import (
	"context"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
)

// Client keeps one AMQP connection for reading broker state and redials it
// when it is gone (a broker restart, a network cut). Every probe runs on its
// own channel, because a failed passive declare closes the channel it ran on.
type Client struct {
	url string

	mu   sync.Mutex
	conn *amqp.Connection
}

// NewClient returns a client for the AMQP URL; it dials on first use.
func NewClient(url string) *Client { return &Client{url: url} }

// Conn returns a live connection, dialling when there is none.
func (c *Client) Conn(ctx context.Context) (*amqp.Connection, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && !c.conn.IsClosed() {
		return c.conn, nil
	}
	conn, err := services.DialAMQP(ctx, c.url)
	if err != nil {
		return nil, fmt.Errorf("connect to RabbitMQ at %s: %w", secret.URL(c.url), err)
	}
	c.conn = conn
	return conn, nil
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

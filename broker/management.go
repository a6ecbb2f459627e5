package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Management reads queue figures from RabbitMQ's management HTTP API
// (plugin rabbitmq_management, port 15672). It is the only place the broker
// reports unacknowledged counts; its figures are refreshed by the broker's
// statistics interval (5 s by default), so they can lag a moment behind.
type Management struct {
	Base  string // http://host:15672
	User  string
	Pass  string
	VHost string
	HTTP  *http.Client
}

// ManagementFor derives the API's address and credentials from an AMQP URL:
// same host, port 15672, same user and vhost.
func ManagementFor(amqpURL string) (*Management, error) {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return nil, fmt.Errorf("AMQP URL: %w", err)
	}
	m := &Management{Base: "http://" + net.JoinHostPort(u.Hostname(), "15672"), User: "guest", Pass: "guest", VHost: "/",
		HTTP: &http.Client{Timeout: 3 * time.Second}}
	if u.User != nil {
		m.User = u.User.Username()
		m.Pass, _ = u.User.Password()
	}
	if v := strings.TrimPrefix(u.Path, "/"); v != "" {
		m.VHost = v
	}
	return m, nil
}

// mgmtQueue is the part of GET /api/queues/{vhost}/{name} the lab reads.
type mgmtQueue struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Durable   bool   `json:"durable"`
	Ready     int    `json:"messages_ready"`
	Unacked   int    `json:"messages_unacknowledged"`
	Messages  int    `json:"messages"`
	Consumers int    `json:"consumers"`
}

// QueueFigures is one queue as the management API reports it.
type QueueFigures struct {
	Exists    bool
	Type      string
	Ready     int
	Unacked   int
	Consumers int
}

// Queue reads one queue. A 404 means the queue does not exist (not an error).
func (m *Management) Queue(ctx context.Context, name string) (QueueFigures, error) {
	u := m.Base + "/api/queues/" + url.PathEscape(m.VHost) + "/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return QueueFigures{}, err
	}
	req.SetBasicAuth(m.User, m.Pass)
	resp, err := m.HTTP.Do(req)
	if err != nil {
		return QueueFigures{}, fmt.Errorf("management API at %s: %w", m.Base, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return QueueFigures{}, nil
	case http.StatusUnauthorized, http.StatusForbidden:
		return QueueFigures{}, fmt.Errorf("management API at %s refused user %s (HTTP %d): give the user the monitoring tag", m.Base, m.User, resp.StatusCode)
	default:
		return QueueFigures{}, fmt.Errorf("management API at %s answered HTTP %d for queue %s", m.Base, resp.StatusCode, name)
	}
	var q mgmtQueue
	if err := json.NewDecoder(resp.Body).Decode(&q); err != nil {
		return QueueFigures{}, fmt.Errorf("management API at %s: queue %s: %w", m.Base, name, err)
	}
	return QueueFigures{Exists: true, Type: q.Type, Ready: q.Ready, Unacked: q.Unacked, Consumers: q.Consumers}, nil
}

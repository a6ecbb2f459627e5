package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rmlab/lab/internal/secret"
	"github.com/rmlab/lab/internal/services"
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

// ManagementFor is the API the lab's config names (services.ManagementBase):
// --management / LAB_MANAGEMENT_URL, else the AMQP URL's host on port 15672;
// the AMQP URL's user and vhost.
func ManagementFor(amqpURL, mgmtURL string) (*Management, error) {
	u, err := url.Parse(amqpURL)
	if err != nil {
		return nil, fmt.Errorf("the AMQP URL cannot be read")
	}
	base, user, pass := services.ManagementBase(amqpURL, mgmtURL)
	m := &Management{Base: base, User: user, Pass: pass, VHost: "/", HTTP: &http.Client{Timeout: 3 * time.Second}}
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
	resp, err := m.get(ctx, "/api/queues/"+url.PathEscape(m.VHost)+"/"+url.PathEscape(name))
	if err != nil {
		return QueueFigures{}, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return QueueFigures{}, nil
	case http.StatusUnauthorized, http.StatusForbidden:
		return QueueFigures{}, fmt.Errorf("management API at %s refused user %s (HTTP %d): give the user the monitoring tag", secret.URL(m.Base), m.User, resp.StatusCode)
	default:
		return QueueFigures{}, fmt.Errorf("management API at %s answered HTTP %d for queue %s", secret.URL(m.Base), resp.StatusCode, name)
	}
	var q mgmtQueue
	if err := json.NewDecoder(resp.Body).Decode(&q); err != nil {
		return QueueFigures{}, fmt.Errorf("management API at %s: queue %s: %w", secret.URL(m.Base), name, err)
	}
	return QueueFigures{Exists: true, Type: q.Type, Ready: q.Ready, Unacked: q.Unacked, Consumers: q.Consumers}, nil
}

// Exchanges lists the names of every exchange in the vhost (the lab's
// marks among them: MarkedNames reads them).
func (m *Management) Exchanges(ctx context.Context) ([]string, error) {
	resp, err := m.get(ctx, "/api/exchanges/"+url.PathEscape(m.VHost)+"?columns=name")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("management API at %s answered HTTP %d listing exchanges", secret.URL(m.Base), resp.StatusCode)
	}
	var xs []struct {
		Name string `json:"name"`
	}
	// A program may declare exchanges without end in its vhost: the list
	// is read up to a bound (about 400 000 names), not into all memory.
	body := &io.LimitedReader{R: resp.Body, N: maxExchangeList + 1}
	if err := json.NewDecoder(body).Decode(&xs); err != nil {
		if body.N <= 0 {
			return nil, fmt.Errorf("management API at %s: the exchanges of vhost %s take more than %d MiB: something declared them without end; delete the vhost (rabbitmqctl delete_vhost) or its exchanges", secret.URL(m.Base), m.VHost, maxExchangeList>>20)
		}
		return nil, fmt.Errorf("management API at %s: exchanges: %w", secret.URL(m.Base), err)
	}
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, x.Name)
	}
	return out, nil
}

// maxExchangeList bounds the exchanges list Exchanges reads.
const maxExchangeList = 32 << 20

// get is a GET of the API's path as its user; the caller closes the body.
func (m *Management) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.Base+path, nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(m.User, m.Pass)
	resp, err := m.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("management API at %s: %w", secret.URL(m.Base), err)
	}
	return resp, nil
}

package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Client talks to a provider at Base ("http://127.0.0.1:PORT").
type Client struct {
	Base string
	HTTP *http.Client
}

func (c Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// Send asks the provider to send one SMS; key "" sends no Idempotency-Key.
// It returns the reply and the HTTP status.
func (c Client) Send(ctx context.Context, key string, req Request) (Reply, int, error) {
	b, _ := json.Marshal(req)
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Base+"/sms", bytes.NewReader(b))
	if err != nil {
		return Reply{}, 0, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if key != "" {
		hr.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.http().Do(hr)
	if err != nil {
		return Reply{}, 0, fmt.Errorf("POST %s/sms: %w (is the provider running? the lesson starts it with `lab worker provider`)", c.Base, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return Reply{}, resp.StatusCode, fmt.Errorf("POST %s/sms answered %d: %s", c.Base, resp.StatusCode, bytes.TrimSpace(body))
	}
	var r Reply
	if err := json.Unmarshal(body, &r); err != nil {
		return Reply{}, resp.StatusCode, fmt.Errorf("POST %s/sms: unreadable answer %q", c.Base, body)
	}
	return r, resp.StatusCode, nil
}

// Stats reads the counters, for every user (to == 0) or one.
func (c Client) Stats(ctx context.Context, to int64) (Stats, error) {
	u := c.Base + "/stats"
	if to != 0 {
		u += "?to=" + strconv.FormatInt(to, 10)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Stats{}, err
	}
	resp, err := c.http().Do(hr)
	if err != nil {
		return Stats{}, fmt.Errorf("GET %s: %w (is the provider running? the lesson starts it with `lab worker provider`)", u, err)
	}
	defer resp.Body.Close()
	var st Stats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return Stats{}, fmt.Errorf("GET %s: %w", u, err)
	}
	return st, nil
}

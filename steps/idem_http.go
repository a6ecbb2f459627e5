package steps

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	lab "github.com/rmlab/lab"
	"github.com/rmlab/lab/internal/programs/provider"
)

func init() {
	registerSource("provider", providerSource)
}

// httpKind sends one HTTP request to the lesson's SMS provider (the one
// `lab worker provider` runs for this namespace) and shows the answer: a JSON
// list of objects as a table, anything else as text.
//
//	```http
//	GET /sms
//	```
//
//	```http
//	POST /sms
//	Idempotency-Key: sms-notify:order:42:paid
//	{"to":7,"text":"hello"}
//	```
//
// The first line is METHOD PATH; header lines follow; the body starts at the
// first line that begins with { or [.
type httpKind struct{}

func (httpKind) Check(s *lab.Step) error {
	if err := checkAttrs(s); err != nil {
		return err
	}
	_, _, _, _, err := parseHTTP(s.Body)
	if err != nil {
		return fmt.Errorf("%s: http step: %v", s.Where(), err)
	}
	return nil
}

func parseHTTP(body string) (method, path string, headers [][2]string, payload string, err error) {
	lines := strings.Split(strings.TrimSpace(body), "\n")
	f := strings.Fields(lines[0])
	if len(f) != 2 || !strings.HasPrefix(f[1], "/") {
		return "", "", nil, "", fmt.Errorf("first line %q: write METHOD /path, e.g. GET /sms", lines[0])
	}
	method, path = strings.ToUpper(f[0]), f[1]
	for i, l := range lines[1:] {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			payload = strings.Join(lines[1+i:], "\n")
			break
		}
		if t == "" {
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			return "", "", nil, "", fmt.Errorf("header line %q: write Name: value", t)
		}
		headers = append(headers, [2]string{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return method, path, headers, payload, nil
}

// providerBase is the address the lesson's provider logged when it started
// listening (learnAddress), as ${provider}.
func (r *Run) providerBase() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if base := r.vars[providerVar]; base != "" {
		return base, nil
	}
	return "", fmt.Errorf("no SMS provider is listening in this lesson yet: start one with a spawn step (program=provider) and wait until=listening")
}

func (httpKind) Run(ctx context.Context, r *Run, s *lab.Step) lab.Result {
	method, path, headers, payload, err := parseHTTP(s.Body)
	if err != nil {
		return fail("%v", err)
	}
	base, err := r.providerBase()
	if err != nil {
		return fail("%v", err)
	}
	url := base + path
	var rd io.Reader
	if payload != "" {
		rd = strings.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return fail("%v", err)
	}
	for _, h := range headers {
		req.Header.Set(h[0], h[1])
	}
	if payload != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	sent := method + " " + url
	for _, h := range headers {
		sent += "\n" + h[0] + ": " + h[1]
	}
	if payload != "" {
		sent += "\n\n" + payload
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return lab.Result{Sent: []string{sent}, Why: fmt.Sprintf("%v (is the provider running? start it with a spawn step, program=provider)", err)}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	o := &Outcome{Source: "http", Stmt: sent, Extra: map[string]string{"status": strconv.Itoa(resp.StatusCode)}}
	if h := resp.Header.Get("Idempotent-Replayed"); h != "" {
		o.Extra["replayed"] = h
	}
	o.Columns, o.Rows = jsonTable(b)
	r.setOutcome(o)
	return lab.Result{Passed: true, Sent: []string{sent}, Observed: fmt.Sprintf("HTTP %d\n%s", resp.StatusCode, o.Text())}
}

// jsonTable turns a JSON object or list of objects into columns (in the
// order the first object gives them) and rows; anything else is one cell.
func jsonTable(b []byte) ([]string, [][]string) {
	var list []json.RawMessage
	if err := json.Unmarshal(b, &list); err != nil {
		var one json.RawMessage
		if json.Unmarshal(b, &one) == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
			list = []json.RawMessage{one}
		} else {
			return []string{"body"}, [][]string{{strings.TrimSpace(string(b))}}
		}
	}
	var cols []string
	var rows [][]string
	for _, raw := range list {
		keys, vals, err := orderedObject(raw)
		if err != nil {
			return []string{"body"}, [][]string{{strings.TrimSpace(string(b))}}
		}
		if cols == nil {
			cols = keys
		}
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = vals[c]
		}
		rows = append(rows, row)
	}
	if cols == nil {
		cols = []string{"body"}
	}
	return cols, rows
}

func orderedObject(raw json.RawMessage) ([]string, map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not an object")
	}
	var keys []string
	vals := map[string]string{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		switch x := v.(type) {
		case string:
			vals[k] = x
		case nil:
			vals[k] = "NULL"
		default:
			j, _ := json.Marshal(x)
			vals[k] = string(j)
		}
	}
	return keys, vals, nil
}

// providerSource reads a ledger figure from the SMS provider at that moment:
// "provider: sent", "provider: sent to=7", "provider: replayed",
// "provider: requests to=8".
func providerSource(ctx context.Context, r *Run, _ *lab.Step, expr string) (int, error) {
	f := strings.Fields(expr)
	if len(f) == 0 || len(f) > 2 {
		return 0, fmt.Errorf("provider: write sent|replayed|requests [to=USER]")
	}
	var to int64
	if len(f) == 2 {
		v, ok := strings.CutPrefix(f[1], "to=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil {
			return 0, fmt.Errorf("provider: %q: write to=USER", f[1])
		}
		to = n
	}
	base, err := r.providerBase()
	if err != nil {
		return 0, err
	}
	st, err := provider.Client{Base: base}.Stats(ctx, to)
	if err != nil {
		return 0, err
	}
	switch f[0] {
	case "sent":
		return st.Sent, nil
	case "replayed":
		return st.Replayed, nil
	case "requests":
		return st.Requests, nil
	}
	return 0, fmt.Errorf("provider: %q: use sent, replayed or requests", f[0])
}

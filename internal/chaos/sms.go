package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	"github.com/rmlab/lab/internal/programs/provider"
)

// The external effect's faults, for a run with an SMS provider (Options.SMS):
// they are not in "all", since a pipeline without a provider has nothing
// for them to hit.
const (
	SMSTimeout FaultKind = "sms-timeout" // the provider sends the next SMS and answers only after the client has given up
	SMSError   FaultKind = "sms-error"   // the provider sends the next SMS and answers 503
)

// smsLate is how long an sms-timeout holds the answer: longer than any
// client should wait for an SMS provider.
const smsLate = 4 * time.Second

// smsProvider is the run's SMS provider (package provider) behind a layer
// that injects the faults a real provider has: an SMS sent and the answer
// lost, or an error after the send.
type smsProvider struct {
	srv  *provider.Server
	http *http.Server
	ln   net.Listener
	hist *History

	mu         sync.Mutex
	late, fail int
}

func startSMS(hist *History, ev *evidence) (*smsProvider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the SMS provider: %w", err)
	}
	p := &smsProvider{srv: provider.NewServer(), ln: ln, hist: hist}
	p.srv.OnSend = func(m provider.SMS, replayed bool) {
		detail := "sent " + m.MessageID
		if replayed {
			detail = "replayed " + m.MessageID + " (key seen: not sent again)"
		}
		if m.Key == "" {
			detail += ", no Idempotency-Key"
		} else {
			detail += ", key " + m.Key
		}
		hist.Wire("provider", "sms", "order-"+strconv.FormatInt(m.To, 10)+"-sms", detail)
		if !replayed {
			now := time.Now()
			hist.Applied(m.To, now) // the timeline's applied line, and the latency
			if ev != nil {
				ev.sent(m.To, now)
			}
		}
	}
	p.http = &http.Server{Handler: p, ReadHeaderTimeout: 5 * time.Second}
	go p.http.Serve(ln)
	return p, nil
}

// URL is what LAB_SMS_URL gives: POST it {"to":USER,"text":"..."}.
func (p *smsProvider) URL() string { return "http://" + p.ln.Addr().String() + "/sms" }

func (p *smsProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		p.srv.ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	late, fail := p.late > 0, p.fail > 0 && p.late == 0
	if late {
		p.late--
	} else if fail {
		p.fail--
	}
	p.mu.Unlock()
	if !late && !fail {
		p.srv.ServeHTTP(w, r)
		return
	}
	// The SMS goes out; the answer is what is lost.
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req provider.Request
	json.Unmarshal(body, &req)
	rec := httptest.NewRecorder()
	p.srv.ServeHTTP(rec, r)
	what := fmt.Sprintf("answered 503 after it (fault sms-error), status %d held back", rec.Code)
	if late {
		what = fmt.Sprintf("held its answer %s (fault sms-timeout)", smsLate)
	}
	p.hist.Wire("provider", "sms-fault", "order-"+strconv.FormatInt(req.To, 10)+"-sms", what)
	if fail {
		http.Error(w, `{"error":"provider busy, try again"}`, http.StatusServiceUnavailable)
		return
	}
	select {
	case <-time.After(smsLate):
	case <-r.Context().Done():
		return
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

func (p *smsProvider) inject(k FaultKind) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k == SMSTimeout {
		p.late++
		return fmt.Sprintf("the provider sends the next SMS and answers %s later", smsLate)
	}
	p.fail++
	return "the provider sends the next SMS and answers 503"
}

// sent is how many SMS went out to each user (replays not counted).
func (p *smsProvider) sent(users int) map[int64]int64 {
	out := map[int64]int64{}
	for u := int64(1); u <= int64(users); u++ {
		if n := p.srv.Stats(u).Sent; n > 0 {
			out[u] = int64(n)
		}
	}
	return out
}

func (p *smsProvider) close() {
	if p != nil {
		p.http.Close()
	}
}

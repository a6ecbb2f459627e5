// Package provider is a small local SMS provider: the "remote system" of
// lesson 8, outside the consumer's database transaction. It counts the SMS it
// sends and honours an Idempotency-Key header: a request whose key it has
// seen, with the same body, gets the first answer again and sends nothing;
// the same key with another body is refused (422).
//
// It runs as `lab worker provider [--listen ADDR]`, by default on a free
// loopback port, so any number of learners on one machine never collide; it
// logs the address (ListeningPrefix), and a lesson passes it on as
// ${provider} (`lab worker executor --provider ${provider}`).
//
//	POST /sms    {"to":7,"text":"..."}  [Idempotency-Key: K]
//	             201 {"message_id":"sms-1","replayed":false}   sent
//	             200 {"message_id":"sms-1","replayed":true}    key seen: not sent again
//	GET  /sms    every SMS sent, in order
//	GET  /stats  {"requests":N,"sent":N,"replayed":N}   (?to=USER counts one user)
package provider

import (
	"encoding/json"
	"fmt"

	"net/http"
	"strconv"
	"sync"
)

// ListeningPrefix starts the line the provider logs once it accepts
// requests; the lesson's run reads the address after it and offers it to
// later steps as ${provider}.
const ListeningPrefix = "SMS provider listening on "

// Request is what a client asks the provider to send.
type Request struct {
	To   int64  `json:"to"`
	Text string `json:"text"`
}

// SMS is one message the provider sent.
type SMS struct {
	MessageID string `json:"message_id"`
	To        int64  `json:"to"`
	Text      string `json:"text"`
	Key       string `json:"idempotency_key"`
}

// Reply is the provider's answer to POST /sms.
type Reply struct {
	MessageID string `json:"message_id"`
	Replayed  bool   `json:"replayed"`
}

// Stats are the provider's counters.
type Stats struct {
	Requests int `json:"requests"`
	Sent     int `json:"sent"`
	Replayed int `json:"replayed"`
}

// Server is the provider's state, in memory: it lives as long as the process.
type Server struct {
	// OnSend, when set, is told about every accepted request (replayed or
	// not) after the answer is decided.
	OnSend func(s SMS, replayed bool)

	mu       sync.Mutex
	sent     []SMS
	byKey    map[string]int // key → index in sent
	requests map[int64]int  // per user
	replayed map[int64]int
}

// NewServer returns an empty provider.
func NewServer() *Server {
	return &Server{byKey: map[string]int{}, requests: map[int64]int{}, replayed: map[int64]int{}}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/sms" && r.Method == http.MethodPost:
		s.send(w, r)
	case r.URL.Path == "/sms" && r.Method == http.MethodGet:
		s.mu.Lock()
		list := append([]SMS{}, s.sent...)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, list)
	case r.URL.Path == "/stats" && r.Method == http.MethodGet:
		var to int64
		if v := r.URL.Query().Get("to"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "to must be a user id"})
				return
			}
			to = n
		}
		writeJSON(w, http.StatusOK, s.Stats(to))
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "POST /sms, GET /sms or GET /stats"})
	}
}

// Stats counts everything, or one user's SMS when to != 0.
func (s *Server) Stats(to int64) Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st Stats
	for u, n := range s.requests {
		if to == 0 || u == to {
			st.Requests += n
		}
	}
	for u, n := range s.replayed {
		if to == 0 || u == to {
			st.Replayed += n
		}
	}
	for _, m := range s.sent {
		if to == 0 || m.To == to {
			st.Sent++
		}
	}
	return st
}

func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil || req.To == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `send {"to":USER,"text":"..."}`})
		return
	}
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	s.requests[req.To]++
	if i, ok := s.byKey[key]; ok && key != "" {
		first := s.sent[i]
		if first.To != req.To || first.Text != req.Text {
			s.mu.Unlock()
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{
				"error": fmt.Sprintf("Idempotency-Key %s was used for another request (%s)", key, first.MessageID)})
			return
		}
		s.replayed[req.To]++
		s.mu.Unlock()
		if s.OnSend != nil {
			s.OnSend(first, true)
		}
		w.Header().Set("Idempotent-Replayed", "true")
		writeJSON(w, http.StatusOK, Reply{MessageID: first.MessageID, Replayed: true})
		return
	}
	m := SMS{MessageID: fmt.Sprintf("sms-%d", len(s.sent)+1), To: req.To, Text: req.Text, Key: key}
	s.sent = append(s.sent, m)
	if key != "" {
		s.byKey[key] = len(s.sent) - 1
	}
	s.mu.Unlock()
	if s.OnSend != nil {
		s.OnSend(m, false)
	}
	writeJSON(w, http.StatusCreated, Reply{MessageID: m.MessageID})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

package provider_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/programs/provider"
	"github.com/rmlab/lab/internal/worker"
)

func start(t *testing.T) (*provider.Server, provider.Client) {
	t.Helper()
	s := provider.NewServer()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, provider.Client{Base: ts.URL}
}

func TestAKeySeenBeforeIsAnsweredAgainWithoutSending(t *testing.T) {
	s, c := start(t)
	ctx := context.Background()
	req := provider.Request{To: 8, Text: "paid"}
	first, code, err := c.Send(ctx, "sms-notify:order:43:paid", req)
	if err != nil || code != http.StatusCreated || first.Replayed {
		t.Fatalf("first: %+v %d %v", first, code, err)
	}
	again, code, err := c.Send(ctx, "sms-notify:order:43:paid", req)
	if err != nil || code != http.StatusOK || !again.Replayed || again.MessageID != first.MessageID {
		t.Fatalf("retry: %+v %d %v", again, code, err)
	}
	if st := s.Stats(8); st.Sent != 1 || st.Replayed != 1 || st.Requests != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestWithoutAKeyEveryRequestSends(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, code, err := c.Send(ctx, "", provider.Request{To: 7, Text: "paid"}); err != nil || code != http.StatusCreated {
			t.Fatalf("send %d: %d %v", i, code, err)
		}
	}
	st, err := c.Stats(ctx, 7)
	if err != nil || st.Sent != 2 {
		t.Fatalf("stats %+v %v", st, err)
	}
}

func TestTheSameKeyWithAnotherRequestIsRefused(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	c.Send(ctx, "k1", provider.Request{To: 7, Text: "paid"})
	_, code, err := c.Send(ctx, "k1", provider.Request{To: 9, Text: "paid"})
	if code != http.StatusUnprocessableEntity || err == nil || !strings.Contains(err.Error(), "used for another request") {
		t.Fatalf("%d %v", code, err)
	}
}

func TestStatsCountOneUserOrEveryone(t *testing.T) {
	_, c := start(t)
	ctx := context.Background()
	c.Send(ctx, "", provider.Request{To: 7, Text: "a"})
	c.Send(ctx, "", provider.Request{To: 8, Text: "b"})
	all, _ := c.Stats(ctx, 0)
	one, _ := c.Stats(ctx, 8)
	if all.Sent != 2 || one.Sent != 1 {
		t.Fatalf("all %+v, user 8 %+v", all, one)
	}
}

// Two providers on one machine (two learners at a workshop) each take a free
// loopback port, say which, and answer there.
func TestEachProviderListensOnItsOwnFreePortAndLogsIt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var addrs []string
	for i := 0; i < 2; i++ {
		in, _ := io.Pipe() // never closed: the worker keeps running until ctx ends
		out, logged := io.Pipe()
		p := worker.NewParent(in, logged, nil, func() {})
		go provider.Main(ctx, p, nil)
		found := make(chan string, 1)
		go func() { // keep draining after the address is read
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if _, addr, ok := strings.Cut(sc.Text(), provider.ListeningPrefix); ok {
					found <- addr
					break
				}
			}
			io.Copy(io.Discard, out)
		}()
		select {
		case a := <-found:
			addrs = append(addrs, a)
		case <-time.After(5 * time.Second):
			t.Fatalf("provider %d never logged %q", i, provider.ListeningPrefix)
		}
	}
	if addrs[0] == addrs[1] || !strings.HasPrefix(addrs[0], "http://127.0.0.1:") {
		t.Fatalf("addresses %v: want two different loopback URLs", addrs)
	}
	for _, a := range addrs {
		if _, err := (provider.Client{Base: a}).Stats(ctx, 0); err != nil {
			t.Errorf("provider at %s does not answer: %v", a, err)
		}
	}
}

package provider_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rmlab/lab/provider"
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

func TestAddrIsALoopbackPortFixedPerNamespace(t *testing.T) {
	a, b := provider.Addr("idem"), provider.Addr("idem")
	if a != b || provider.Addr("alice") == a {
		t.Fatalf("idem %s/%s, alice %s", a, b, provider.Addr("alice"))
	}
	host, _, err := net.SplitHostPort(a)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("%s", a)
	}
}

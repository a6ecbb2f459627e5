package broker_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rmlab/lab/internal/broker"
)

// The exchanges list is read up to a bound: a vhost where a program
// declared exchanges without end (here an API answering 40 MiB of names)
// gets an error that says what and how to fix it, not all of it in
// memory; a list under the bound is read whole.
func TestAnEndlessExchangesListIsRefusedSayingWhyAndAShortOneRead(t *testing.T) {
	names := 3
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("["))
		for i := range names {
			if i > 0 {
				w.Write([]byte(","))
			}
			fmt.Fprintf(w, `{"name":"x%0100d"}`, i)
		}
		w.Write([]byte("]"))
	}))
	defer api.Close()
	m := &broker.Management{Base: api.URL, User: "u", Pass: "p", VHost: "rmlab_x", HTTP: &http.Client{Timeout: time.Minute}}
	ctx := context.Background()
	if xs, err := m.Exchanges(ctx); err != nil || len(xs) != 3 {
		t.Fatalf("a short list: %d names, %v", len(xs), err)
	}
	names = 40 << 20 / 110
	_, err := m.Exchanges(ctx)
	if err == nil || !strings.Contains(err.Error(), "more than 32 MiB") || !strings.Contains(err.Error(), "delete_vhost") {
		t.Fatalf("a 40 MiB list: %v; want it refused saying why and how to fix it", err)
	}
}

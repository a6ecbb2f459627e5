package steps

import (
	"reflect"
	"testing"
)

func TestHTTPStepBodyGivesRequestLineHeadersAndJSONBody(t *testing.T) {
	m, p, h, body, err := parseHTTP("POST /sms\nIdempotency-Key: sms-notify:order:43:paid\n{\"to\":8}\n")
	if err != nil || m != "POST" || p != "/sms" || len(h) != 1 || h[0] != [2]string{"Idempotency-Key", "sms-notify:order:43:paid"} || body != `{"to":8}` {
		t.Fatalf("%q %q %q %q %v", m, p, h, body, err)
	}
	if _, _, _, _, err := parseHTTP("fetch the list"); err == nil {
		t.Fatal("a body without METHOD /path parsed")
	}
}

func TestAJSONListBecomesATableInTheProvidersFieldOrder(t *testing.T) {
	cols, rows := jsonTable([]byte(`[{"message_id":"sms-1","to":7,"key":""},{"message_id":"sms-2","to":7,"key":"k"}]`))
	if !reflect.DeepEqual(cols, []string{"message_id", "to", "key"}) ||
		!reflect.DeepEqual(rows, [][]string{{"sms-1", "7", ""}, {"sms-2", "7", "k"}}) {
		t.Fatalf("%v %v", cols, rows)
	}
	cols, rows = jsonTable([]byte(`{"message_id":"sms-3","replayed":true}`))
	if !reflect.DeepEqual(cols, []string{"message_id", "replayed"}) || !reflect.DeepEqual(rows, [][]string{{"sms-3", "true"}}) {
		t.Fatalf("%v %v", cols, rows)
	}
	if cols, _ := jsonTable([]byte("not json")); cols[0] != "body" {
		t.Fatalf("%v", cols)
	}
}

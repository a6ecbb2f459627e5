package producer

import (
	"encoding/json"

	labsql "github.com/rmlab/lab/sql"
)

// The producer's statements live in sql/outbox/ (producer_*.sql), as the
// relay's do, so that a lesson can show the very text it sends.
var (
	stmtOrderInsert   = labsql.Statement("outbox/producer_order_insert.sql")
	stmtOrderPay      = labsql.Statement("outbox/producer_order_pay.sql")
	stmtEventInsert   = labsql.Statement("outbox/producer_event_insert.sql")
	stmtLastOrder     = labsql.Statement("outbox/producer_last_order.sql")
	stmtCreatedOrders = labsql.Statement("outbox/producer_created_orders.sql")
	stmtNewEvents     = labsql.Statement("outbox/producer_new_events.sql")
	stmtMarkSent      = labsql.Statement("outbox/producer_mark_sent.sql")
)

// The events' payloads, their keys in the order the article writes them.
type (
	paidPayload struct {
		EventID     string `json:"event_id,omitempty"`
		BusinessKey string `json:"business_key"`
		UserID      int64  `json:"user_id"`
		Amount      int64  `json:"amount"`
	}
	orderPayload struct {
		OrderID int64  `json:"orderId"`
		Version int64  `json:"version"`
		Status  string `json:"status"`
	}
)

// payload is v as the JSON text the outbox row holds.
func payload(v any) string {
	b, _ := json.Marshal(v) // plain structs of strings and numbers
	return string(b)
}

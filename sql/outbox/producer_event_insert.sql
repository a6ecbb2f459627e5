-- The producer's outbox event, in the order's transaction (the article's
-- statement, create_order.sql, with its values as parameters): event id,
-- order id, event type, payload (JSON text).
INSERT INTO outbox_event
(event_id,aggregate_id,event_type,payload,status,available_at,created_at)
VALUES
(?,?,?,?,'NEW',NOW(6),NOW(6));

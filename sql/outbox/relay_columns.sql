-- Columns the relay adds next to the article's outbox_event (its CREATE TABLE
-- stays as written): why the last attempt failed, when the event was marked
-- SENT (send latency = sent_at - created_at), and an index for the
-- per-aggregate ordering check.
ALTER TABLE outbox_event
ADD COLUMN last_error VARCHAR(255) NULL,
ADD COLUMN sent_at DATETIME(6) NULL,
ADD KEY idx_aggregate(aggregate_id);

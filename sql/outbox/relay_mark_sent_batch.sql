-- The mark for a batch (--batch N > 1): every confirmed event of one claim,
-- guarded by status and the claim's token. Fewer than N rows affected means
-- some claims changed hands; the relay then marks them one by one with
-- relay_mark_sent.sql to find out which. Parameters: token, then the ids.
UPDATE outbox_event
SET status='SENT',lease_token=NULL,locked_until=NULL,sent_at=NOW(6)
WHERE status='SENDING' AND lease_token=? AND event_id IN (?);

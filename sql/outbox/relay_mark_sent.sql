-- After the broker confirmed the publish (and returned nothing): SENT, guarded
-- by the claim's token. 0 rows affected means the claim changed hands; the
-- relay logs it and never overwrites. Parameters: event id, token.
UPDATE outbox_event
SET status='SENT',lease_token=NULL,locked_until=NULL,sent_at=NOW(6)
WHERE event_id=?
AND status='SENDING' AND lease_token=?;

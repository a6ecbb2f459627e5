-- No confirm, a nack or a return: not SENT. Back to NEW, due again after a
-- backoff, or DEAD once the attempts are used up; guarded by the token like
-- the mark. Parameters: 'NEW' or 'DEAD', backoff seconds, the reason, event
-- id, token.
UPDATE outbox_event
SET status=?,available_at=DATE_ADD(NOW(6),INTERVAL ? SECOND),
lease_token=NULL,locked_until=NULL,last_error=?
WHERE event_id=?
AND status='SENDING' AND lease_token=?;

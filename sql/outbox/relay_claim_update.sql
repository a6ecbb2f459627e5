-- The claim's write, in the same transaction, once per selected row: a fresh
-- lease token per claim, the lease, one more attempt. The program checks that
-- it affected exactly 1 row. Parameters: token, lease seconds, event id.
UPDATE outbox_event
SET status='SENDING',lease_token=?,
locked_until=DATE_ADD(NOW(6),INTERVAL ? SECOND),attempts=attempts+1
WHERE event_id=? AND status='NEW';

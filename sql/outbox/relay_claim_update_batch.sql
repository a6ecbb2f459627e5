-- The claim's write for a batch (--batch N > 1): the same UPDATE for all the
-- selected rows at once, under one token. The program checks that it
-- affected exactly N rows. Parameters: token, lease seconds, then the N
-- event ids (the relay writes one ? per id).
UPDATE outbox_event
SET status='SENDING',lease_token=?,
locked_until=DATE_ADD(NOW(6),INTERVAL ? SECOND),attempts=attempts+1
WHERE event_id IN (?) AND status='NEW';

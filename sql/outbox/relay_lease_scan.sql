-- The lease-expiry scan, bounded per batch: claims whose lease ran out go
-- back to NEW after a delay, or to DEAD when they used up their attempts.
-- Parameters: max attempts, delay seconds, how many claims at most (100).
UPDATE outbox_event
SET status=IF(attempts>=?,'DEAD','NEW'),available_at=DATE_ADD(NOW(6),INTERVAL ? SECOND),
lease_token=NULL,locked_until=NULL,last_error='lease expired'
WHERE status='SENDING' AND locked_until<NOW(6)
ORDER BY locked_until LIMIT ?;

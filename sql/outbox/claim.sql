START TRANSACTION;
SELECT event_id FROM outbox_event
WHERE status='NEW' AND available_at<=NOW(6)
ORDER BY available_at,event_id
LIMIT 1 FOR UPDATE SKIP LOCKED;
UPDATE outbox_event
SET status='SENDING',lease_token='worker-A-claim-001',
locked_until=DATE_ADD(NOW(6),INTERVAL ${lease:30} SECOND),attempts=attempts+1
WHERE event_id='order-42-created-v1' AND status='NEW';
COMMIT;

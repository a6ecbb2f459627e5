UPDATE outbox_event
SET status='SENT',lease_token=NULL,locked_until=NULL
WHERE event_id='order-42-created-v1'
AND status='SENDING' AND lease_token='worker-A-claim-001';

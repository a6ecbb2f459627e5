UPDATE outbox_event
SET status='NEW',available_at=DATE_ADD(NOW(6),INTERVAL ${lease:10} SECOND),
lease_token=NULL,locked_until=NULL
WHERE status='SENDING' AND locked_until<NOW(6);

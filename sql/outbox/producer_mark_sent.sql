-- After the broker's confirm: SENT, only from NEW. Parameter: event id.
UPDATE outbox_event SET status='SENT' WHERE event_id=? AND status='NEW';

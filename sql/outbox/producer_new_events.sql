-- What --resend publishes again: every event still NEW, oldest first.
SELECT event_id, payload FROM outbox_event WHERE status='NEW' ORDER BY created_at, event_id;

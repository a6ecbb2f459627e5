-- The relay's claim, inside one short transaction: lock up to ? due NEW
-- events, skipping rows another relay has locked (--no-skip-locked drops the
-- last two words, and a second relay then waits on the first one's locks).
-- Parameter: batch size.
SELECT event_id,aggregate_id,event_type,payload,attempts FROM outbox_event
WHERE status='NEW' AND available_at<=NOW(6)
ORDER BY available_at,event_id
LIMIT ? FOR UPDATE SKIP LOCKED;

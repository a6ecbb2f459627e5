-- The claim with --ordered: one event in flight per aggregate. An event is
-- due only when no earlier event of its aggregate is still NEW or SENDING,
-- and no event of its aggregate is SENDING. Parameter: batch size.
SELECT e.event_id,e.aggregate_id,e.event_type,e.payload,e.attempts FROM outbox_event e
WHERE e.status='NEW' AND e.available_at<=NOW(6)
AND NOT EXISTS (SELECT 1 FROM outbox_event p
WHERE p.aggregate_id=e.aggregate_id AND p.event_id<>e.event_id
AND (p.status='SENDING' OR (p.status='NEW' AND (p.created_at,p.event_id)<(e.created_at,e.event_id))))
ORDER BY e.available_at,e.event_id
LIMIT ? FOR UPDATE SKIP LOCKED;

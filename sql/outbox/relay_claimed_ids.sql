-- When the claim's batch write affected fewer rows than it selected: the
-- events this claim holds, the only ones the relay keeps. Parameter: token.
SELECT event_id FROM outbox_event WHERE lease_token=?;

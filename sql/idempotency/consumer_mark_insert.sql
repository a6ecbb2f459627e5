-- The consumer's mark, before (or, points-first, after) its effect; a 1062
-- means the work was already done. Parameters: consumer name, key (business
-- key, or with message-id the event id), event id, user id, amount.
INSERT INTO consumed_operation (consumer_name,business_key,event_id,user_id,amount) VALUES(?,?,?,?,?);

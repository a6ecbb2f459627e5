-- The batch consumer's mark, in each delivery's own transaction. Parameters:
-- consumer name, business key, event id, user id, amount.
INSERT INTO consumed_operation (consumer_name,business_key,event_id,user_id,amount) VALUES(?,?,?,?,?);

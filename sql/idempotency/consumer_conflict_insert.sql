-- A payload conflict (conflict.sql's table): the message's values beside the
-- stored mark's, counted again when seen again. Parameters: consumer name,
-- key, event id, user id, amount, stored event id, stored user id, stored
-- amount.
INSERT INTO consumed_conflict (consumer_name,business_key,event_id,user_id,amount,stored_event_id,stored_user_id,stored_amount) VALUES(?,?,?,?,?,?,?,?) ON DUPLICATE KEY UPDATE seen=seen+1;

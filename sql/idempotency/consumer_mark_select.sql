-- After a 1062 on the mark: the stored row, to compare with the message's
-- user and amount. Parameters: consumer name, key.
SELECT event_id,user_id,amount FROM consumed_operation WHERE consumer_name=? AND business_key=?;

-- points-first, before its effect: is there a mark already? Parameters:
-- consumer name, key.
SELECT COUNT(*) FROM consumed_operation WHERE consumer_name=? AND business_key=?;

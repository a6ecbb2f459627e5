-- The batch consumer's points, in the same transaction as the mark; 0 rows
-- affected means no account. Parameters: amount, user id.
UPDATE points_account SET points=points+? WHERE user_id=?;

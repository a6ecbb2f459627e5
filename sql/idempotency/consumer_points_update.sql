-- The points consumer's effect; 0 rows affected means no account, an error
-- the program checks. Parameters: amount, user id.
UPDATE points_account SET points=points+? WHERE user_id=?;

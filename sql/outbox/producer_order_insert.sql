-- The producer's order: one row, in the transaction that also writes its
-- event (the outbox) or before it publishes (commit, then publish).
-- Parameters: order id, status.
INSERT INTO purchase_order VALUES(?,?);

-- Orders of the range a kill left CREATED (--order-events): the restarted
-- producer pays them. Parameters: from, last.
SELECT id FROM purchase_order WHERE status='CREATED' AND id BETWEEN ? AND ?;

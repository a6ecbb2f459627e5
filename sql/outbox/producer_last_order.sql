-- Where a restarted producer goes on: the highest order of its range
-- committed, or the one before the range. Parameters: from-1, from, last.
SELECT COALESCE(MAX(id),?) FROM purchase_order WHERE id BETWEEN ? AND ?;

-- After the order-view update matched 0 rows: the row, to tell a missing row
-- from a stale or repeated version. Parameters: consumer name, order id.
SELECT status,version FROM order_view WHERE consumer=? AND order_id=?;

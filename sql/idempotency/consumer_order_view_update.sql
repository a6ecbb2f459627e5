-- The order-view consumer's effect (--strategy none): whatever the row
-- holds. Parameters: status, version, consumer name, order id.
UPDATE order_view SET status=?,version=? WHERE consumer=? AND order_id=?;

-- The order-view consumer's effect with --strategy newer-version: only over
-- an older version. Parameters: status, version, consumer name, order id,
-- version.
UPDATE order_view SET status=?,version=? WHERE consumer=? AND order_id=? AND version<?;

-- The second of an order's transactions in --order-events mode: PAID, with
-- its version-2 event beside it. Parameter: order id.
UPDATE purchase_order SET status='PAID' WHERE id=?;

START TRANSACTION;
INSERT INTO purchase_order VALUES(42,'NEW');
INSERT INTO outbox_event
(event_id,aggregate_id,event_type,payload,status,available_at,created_at)
VALUES
('order-42-created-v1',42,'OrderCreated',
JSON_OBJECT('orderId',42,'version',1),'NEW',NOW(6),NOW(6));
COMMIT;

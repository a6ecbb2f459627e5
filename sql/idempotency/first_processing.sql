START TRANSACTION;
INSERT INTO consumed_operation
VALUES('points-award','order:42:paid','event-001',7,10);
UPDATE points_account SET points=points+10 WHERE user_id=7;
COMMIT;
SELECT points FROM points_account WHERE user_id=7;

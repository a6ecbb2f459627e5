START TRANSACTION;
INSERT INTO consumed_operation
VALUES('points-award','order:42:paid','event-002',7,10);
ROLLBACK;

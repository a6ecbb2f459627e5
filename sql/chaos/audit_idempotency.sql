-- Not in the article: what the lab records when a program of someone
-- else's (a challenge) is the consumer, so that it can say when each order's
-- effect was applied. The trigger runs inside the consumer's transaction,
-- so a row here is an application that committed.
CREATE TABLE lab_applied (
seq BIGINT AUTO_INCREMENT PRIMARY KEY,
user_id BIGINT NOT NULL,
delta BIGINT NOT NULL,
at DATETIME(6) NOT NULL,
conn BIGINT NOT NULL
) ENGINE=InnoDB;
CREATE TRIGGER lab_applied_audit AFTER UPDATE ON points_account FOR EACH ROW
INSERT INTO lab_applied (user_id,delta,at,conn)
SELECT NEW.user_id, NEW.points-OLD.points, NOW(6), CONNECTION_ID() FROM DUAL WHERE NEW.points <> OLD.points;

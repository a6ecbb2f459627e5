-- Not in the article: what the lab records when a program of someone
-- else's (a challenge) is the consumer, so that it can say when each order's
-- effect was applied. The trigger runs inside the consumer's transaction,
-- so a row here is an application that committed; who is the MySQL user
-- that made it (each copy of the program has its own), USER() being the
-- client's login even inside the trigger; at is seconds since the epoch
-- from SYSDATE, which a session's SET timestamp or time_zone cannot move.
CREATE TABLE lab_applied (
seq BIGINT AUTO_INCREMENT PRIMARY KEY,
user_id BIGINT NOT NULL,
delta BIGINT NOT NULL,
at DECIMAL(17,6) NOT NULL,
conn BIGINT NOT NULL,
who VARCHAR(128) NOT NULL
) ENGINE=InnoDB;
CREATE TRIGGER lab_applied_audit AFTER UPDATE ON points_account FOR EACH ROW
INSERT INTO lab_applied (user_id,delta,at,conn,who)
SELECT NEW.user_id, NEW.points-OLD.points, UNIX_TIMESTAMP(SYSDATE(6)), CONNECTION_ID(), SUBSTRING_INDEX(USER(),'@',1) FROM DUAL WHERE NEW.points <> OLD.points;

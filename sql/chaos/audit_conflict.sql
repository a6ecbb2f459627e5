-- Not in the article: the lab's record of every conflict a program of
-- someone else's (a challenge) writes into consumed_conflict, with when and
-- which copy, so the checker can tie each to a delivery that carried it.
CREATE TABLE lab_conflict (
seq BIGINT AUTO_INCREMENT PRIMARY KEY,
business_key VARCHAR(128) NOT NULL,
event_id VARCHAR(64) NOT NULL,
at DECIMAL(17,6) NOT NULL,
who VARCHAR(128) NOT NULL
) ENGINE=InnoDB;
CREATE TRIGGER lab_conflict_audit AFTER INSERT ON consumed_conflict FOR EACH ROW
INSERT INTO lab_conflict (business_key,event_id,at,who)
VALUES (NEW.business_key, NEW.event_id, UNIX_TIMESTAMP(SYSDATE(6)), SUBSTRING_INDEX(USER(),'@',1));

-- Not in the article: what the lab records when a program of someone
-- else's (a challenge) is the relay: each change of an event's status, in
-- the relay's transaction, so a row here is a change that committed.
CREATE TABLE lab_status (
seq BIGINT AUTO_INCREMENT PRIMARY KEY,
event_id VARCHAR(64) NOT NULL,
old_status VARCHAR(16) NOT NULL,
new_status VARCHAR(16) NOT NULL,
at DECIMAL(17,6) NOT NULL,
conn BIGINT NOT NULL,
who VARCHAR(128) NOT NULL
) ENGINE=InnoDB;
CREATE TRIGGER lab_status_audit AFTER UPDATE ON outbox_event FOR EACH ROW
INSERT INTO lab_status (event_id,old_status,new_status,at,conn,who)
SELECT NEW.event_id, OLD.status, NEW.status, UNIX_TIMESTAMP(SYSDATE(6)), CONNECTION_ID(), SUBSTRING_INDEX(USER(),'@',1) FROM DUAL WHERE NEW.status <> OLD.status;

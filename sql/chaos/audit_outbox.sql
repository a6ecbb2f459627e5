-- Not in the article: what the lab records when a program of someone
-- else's (a challenge) is the relay: each change of an event's status, in
-- the relay's transaction, so a row here is a change that committed.
CREATE TABLE lab_status (
seq BIGINT AUTO_INCREMENT PRIMARY KEY,
event_id VARCHAR(64) NOT NULL,
old_status VARCHAR(16) NOT NULL,
new_status VARCHAR(16) NOT NULL,
at DATETIME(6) NOT NULL,
conn BIGINT NOT NULL
) ENGINE=InnoDB;
CREATE TRIGGER lab_status_audit AFTER UPDATE ON outbox_event FOR EACH ROW
INSERT INTO lab_status (event_id,old_status,new_status,at,conn)
SELECT NEW.event_id, OLD.status, NEW.status, NOW(6), CONNECTION_ID() FROM DUAL WHERE NEW.status <> OLD.status;

-- Not in the article: the order challenge's view of each order's newest
-- state (a row per order, NONE at version 0 until an event is applied),
-- and the lab's audit of every change to it that committed.
CREATE TABLE order_view (
order_id BIGINT PRIMARY KEY,
status VARCHAR(16) NOT NULL,
version INT NOT NULL
) ENGINE=InnoDB;
CREATE TABLE lab_view (
seq BIGINT AUTO_INCREMENT PRIMARY KEY,
order_id BIGINT NOT NULL,
old_status VARCHAR(16) NOT NULL,
new_status VARCHAR(16) NOT NULL,
old_version INT NOT NULL,
new_version INT NOT NULL,
at DECIMAL(17,6) NOT NULL,
conn BIGINT NOT NULL,
who VARCHAR(128) NOT NULL
) ENGINE=InnoDB;
CREATE TRIGGER lab_view_audit AFTER UPDATE ON order_view FOR EACH ROW
INSERT INTO lab_view (order_id,old_status,new_status,old_version,new_version,at,conn,who)
SELECT NEW.order_id, OLD.status, NEW.status, OLD.version, NEW.version, UNIX_TIMESTAMP(SYSDATE(6)), CONNECTION_ID(), SUBSTRING_INDEX(USER(),'@',1) FROM DUAL
WHERE NEW.status <> OLD.status OR NEW.version <> OLD.version;

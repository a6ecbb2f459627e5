-- The article's outbox database (sections 3 and 4), as written.
CREATE DATABASE blog_outbox_lab;
USE blog_outbox_lab;
CREATE TABLE purchase_order (
id BIGINT PRIMARY KEY,
status VARCHAR(16) NOT NULL
) ENGINE=InnoDB;
CREATE TABLE outbox_event (
event_id VARCHAR(64) PRIMARY KEY,
aggregate_id BIGINT NOT NULL,
event_type VARCHAR(64) NOT NULL,
payload JSON NOT NULL,
status VARCHAR(16) NOT NULL,
attempts INT NOT NULL DEFAULT 0,
available_at DATETIME(6) NOT NULL,
lease_token VARCHAR(64) NULL,
locked_until DATETIME(6) NULL,
created_at DATETIME(6) NOT NULL,
KEY idx_pending(status,available_at,event_id)
) ENGINE=InnoDB;

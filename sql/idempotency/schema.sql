-- The article's idempotency database (section 2), as written.
CREATE DATABASE blog_idempotency_lab;
USE blog_idempotency_lab;
CREATE TABLE points_account (
user_id BIGINT PRIMARY KEY,
points BIGINT NOT NULL
) ENGINE=InnoDB;
CREATE TABLE consumed_operation (
consumer_name VARCHAR(64) NOT NULL,
business_key VARCHAR(128) NOT NULL,
event_id VARCHAR(64) NOT NULL,
user_id BIGINT NOT NULL,
amount INT NOT NULL,
PRIMARY KEY(consumer_name,business_key)
) ENGINE=InnoDB;
INSERT INTO points_account VALUES(7,0);

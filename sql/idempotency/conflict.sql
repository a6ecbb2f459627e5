-- Not in the article: where the lab's consumer records a payload conflict
-- (same consumer and business key, different user or amount). The article's
-- tables stay as written; this one sits beside them. IF NOT EXISTS because the
-- consumer also creates it on its first conflict when a lesson did not.
CREATE TABLE IF NOT EXISTS consumed_conflict (
consumer_name VARCHAR(64) NOT NULL,
business_key VARCHAR(128) NOT NULL,
event_id VARCHAR(64) NOT NULL,
user_id BIGINT NOT NULL,
amount INT NOT NULL,
stored_event_id VARCHAR(64) NOT NULL,
stored_user_id BIGINT NOT NULL,
stored_amount INT NOT NULL,
seen INT NOT NULL DEFAULT 1,
PRIMARY KEY(consumer_name,business_key,event_id)
) ENGINE=InnoDB;

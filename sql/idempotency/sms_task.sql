-- Not in the article: the SMS consumer's task table (lessons 2 and 8). The
-- consumer inserts a task in the same transaction as its mark; the executor
-- sends it later through the provider, with task_id as the Idempotency-Key.
CREATE TABLE IF NOT EXISTS sms_task (
task_id VARCHAR(200) PRIMARY KEY,
user_id BIGINT NOT NULL,
body VARCHAR(255) NOT NULL,
status VARCHAR(16) NOT NULL,
attempts INT NOT NULL DEFAULT 0,
provider_ref VARCHAR(64) NULL
) ENGINE=InnoDB;

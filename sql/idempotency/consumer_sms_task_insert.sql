-- The SMS consumer's effect (sms_task.sql's table): a task for the executor
-- to send. Parameters: task id (consumer name:business key), user id, body.
INSERT INTO sms_task (task_id,user_id,body,status) VALUES(?,?,?,'NEW');

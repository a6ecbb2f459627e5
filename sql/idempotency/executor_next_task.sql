-- The executor's next task to send (sms_task.sql's table): the oldest NEW.
SELECT task_id,user_id,body,attempts FROM sms_task WHERE status='NEW' ORDER BY task_id LIMIT 1;

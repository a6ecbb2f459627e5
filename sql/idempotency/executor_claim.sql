-- Before calling the provider: one more attempt, counted and committed so it
-- survives a crash; 0 rows means someone else finished the task. Parameter:
-- task id.
UPDATE sms_task SET attempts=attempts+1 WHERE task_id=? AND status='NEW';

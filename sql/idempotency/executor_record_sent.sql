-- After the provider's answer: SENT, only from NEW. Parameters: the
-- provider's message id, task id.
UPDATE sms_task SET status='SENT',provider_ref=? WHERE task_id=? AND status='NEW';

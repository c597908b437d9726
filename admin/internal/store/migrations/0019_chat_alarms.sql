-- Chat alarms (issue 35 item 2): a job's alarm webhook posts in a format
-- (AlarmWebhookFormat: 0 and 1 Carillon's JSON, 2 DingTalk, 3 Feishu,
-- 4 WeCom, 5 Slack, 6 the job's template), signed with its secret (never
-- returned by the API) where the format signs.
ALTER TABLE jobs ADD COLUMN alarm_webhook_format INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN alarm_webhook_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN alarm_webhook_template TEXT NOT NULL DEFAULT '';
-- A failed alarm delivery is tried again: the alarm stays PENDING (1) with
-- the tries made so far, the instant of the next (Unix milliseconds; 0:
-- now) and the channels that already took it (newline-separated), so that
-- a retry goes only to the channels that failed.
ALTER TABLE runs ADD COLUMN alarm_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN alarm_retry_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN alarm_sent TEXT NOT NULL DEFAULT '';
ALTER TABLE workflow_runs ADD COLUMN alarm_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflow_runs ADD COLUMN alarm_retry_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workflow_runs ADD COLUMN alarm_sent TEXT NOT NULL DEFAULT '';

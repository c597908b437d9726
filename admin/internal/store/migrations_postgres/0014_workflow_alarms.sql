-- Alarms on a workflow run's failure (issue 33), as runs have theirs.
ALTER TABLE workflows ADD COLUMN alarm_emails TEXT NOT NULL DEFAULT ''; -- newline-separated
ALTER TABLE workflows ADD COLUMN alarm_webhook_url TEXT NOT NULL DEFAULT '';
ALTER TABLE workflow_runs ADD COLUMN alarm_status BIGINT NOT NULL DEFAULT 0;
ALTER TABLE workflow_runs ADD COLUMN alarm_message TEXT NOT NULL DEFAULT '';
-- The alarm sender's scan (1 = ALARM_STATUS_PENDING), as runs_alarm is of runs.
CREATE INDEX workflow_runs_alarm ON workflow_runs (id) WHERE alarm_status = 1;
-- Retention's scan of ended workflow runs.
CREATE INDEX workflow_runs_finished ON workflow_runs (finished_at) WHERE finished_at IS NOT NULL;

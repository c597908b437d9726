-- Concurrency caps (issue 34 item 6): at most max_concurrency runs of a job,
-- or of all a group's jobs, RUNNING at once; 0 means no cap. jobs.capped
-- says the job or its group has a cap (kept by the job and group writes),
-- so that the fire path takes the cap's slower claim for capped jobs only.
ALTER TABLE jobs ADD COLUMN max_concurrency INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN capped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE groups ADD COLUMN max_concurrency INTEGER NOT NULL DEFAULT 0;
-- runs.slot: 0 for runs of jobs without a cap; 1 for a capped job's run
-- that holds (or held) a slot; 2 for one waiting for a slot (PENDING).
-- The partial indexes hold capped runs only: the others cost nothing.
ALTER TABLE runs ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_slots_job ON runs (job_id) WHERE slot = 1 AND status = 1;
CREATE INDEX runs_slots_group ON runs (group_id) WHERE slot = 1 AND status = 1;
CREATE INDEX runs_slot_waiting ON runs (group_id, due_at, id) WHERE slot = 2 AND status = 7;
-- When the run's handler began on its executor (RunResult.started_at), in
-- Unix milliseconds; NULL when the executor did not say.
ALTER TABLE runs ADD COLUMN started_at INTEGER;

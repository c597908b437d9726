-- Restarts lose nothing and mislabel nothing (issue 12).

-- A misfire is recorded as one run per job and outage: the instants it
-- stands for run from scheduled_at through missed_until, missed_count of them.
ALTER TABLE runs ADD COLUMN missed_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN missed_until INTEGER;
-- 1 when the admin settled the run without a result from its executor
-- (LOST, TIMED_OUT, or unknown after a restart): a result reported later
-- replaces what the admin guessed.
ALTER TABLE runs ADD COLUMN admin_settled INTEGER NOT NULL DEFAULT 0;

-- The executor process registered at an address (RegisterRequest.instance_id).
ALTER TABLE registry ADD COLUMN instance_id TEXT NOT NULL DEFAULT '';

-- The identity of this database, sent with every run so that executors keep
-- the runs of different databases apart (run ids restart at 1 in a new one).
INSERT OR IGNORE INTO settings (name, value, updated_at)
    VALUES ('database_id', lower(hex(randomblob(16))), CAST(unixepoch('subsec') * 1000 AS INTEGER));

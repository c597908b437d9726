-- SQLite's 0010 (issue 20, sending ahead): what an executor declared it
-- can do at its latest heartbeat (RegisterRequest.capabilities), one bit
-- per Capability (bit 1: CAPABILITY_DUE_AT), which every admin of the
-- database reads.
ALTER TABLE registry ADD COLUMN capabilities BIGINT NOT NULL DEFAULT 0;

-- PostgreSQL's own (issue 20): a job change says whether it changed what
-- the job's runs carry to their executors (1), the columns the store's
-- runsChanged compares: handler, param, block strategy, timeout, script.
-- The other admins then replace their runs of the job sent ahead of
-- their instant, as the admin that made the update does (Store.follow,
-- UpdatedSince).
ALTER TABLE job_changes ADD COLUMN updated BIGINT NOT NULL DEFAULT 0;
CREATE OR REPLACE FUNCTION job_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO job_changes (job_id, stopped) VALUES (OLD.id, 1);
    ELSE
        INSERT INTO job_changes (job_id, stopped, updated) VALUES (NEW.id,
            CASE WHEN OLD.enabled = 1 AND NEW.enabled = 0 THEN 1 ELSE 0 END,
            CASE WHEN (OLD.handler, OLD.param, OLD.block_strategy, OLD.timeout_seconds,
                       OLD.script_type, OLD.script_source, OLD.script_updated_at)
                 IS DISTINCT FROM (NEW.handler, NEW.param, NEW.block_strategy, NEW.timeout_seconds,
                       NEW.script_type, NEW.script_source, NEW.script_updated_at) THEN 1 ELSE 0 END);
    END IF;
    RETURN NULL;
END $$;

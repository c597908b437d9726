-- SQLite's 0017 (issue 34 item 3): param templates.
ALTER TABLE jobs ADD COLUMN param_template BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN rendered_param TEXT;
-- A job change says its runs carry something else (updated, as 0010's)
-- when its param's template flag changed, or the time zone a template
-- renders in: the store's runsChanged compares them.
CREATE OR REPLACE FUNCTION job_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO job_changes (job_id, stopped) VALUES (OLD.id, 1);
    ELSE
        INSERT INTO job_changes (job_id, stopped, updated) VALUES (NEW.id,
            CASE WHEN OLD.enabled = 1 AND NEW.enabled = 0 THEN 1 ELSE 0 END,
            CASE WHEN (OLD.handler, OLD.param, OLD.block_strategy, OLD.timeout_seconds,
                       OLD.script_type, OLD.script_source, OLD.script_updated_at, OLD.param_template,
                       CASE WHEN OLD.param_template = 1 OR NEW.param_template = 1 THEN OLD.time_zone END)
                 IS DISTINCT FROM (NEW.handler, NEW.param, NEW.block_strategy, NEW.timeout_seconds,
                       NEW.script_type, NEW.script_source, NEW.script_updated_at, NEW.param_template,
                       CASE WHEN OLD.param_template = 1 OR NEW.param_template = 1 THEN NEW.time_zone END)
                 THEN 1 ELSE 0 END);
    END IF;
    RETURN NULL;
END $$;

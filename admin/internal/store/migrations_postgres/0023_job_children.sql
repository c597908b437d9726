-- SQLite's 0023 (issue 36 item 5): a job's child jobs are rows of
-- job_children, in the order position keeps, not text in
-- jobs.child_job_ids.
CREATE TABLE job_children (
    parent_id BIGINT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    child_id  BIGINT NOT NULL REFERENCES jobs (id),
    position  BIGINT NOT NULL,
    PRIMARY KEY (parent_id, position),
    UNIQUE (child_id, parent_id)
);
INSERT INTO job_children (parent_id, child_id, position)
    SELECT j.id, c.id::bigint, c.n - 1
    FROM jobs AS j, unnest(string_to_array(j.child_job_ids, ',')) WITH ORDINALITY AS c (id, n)
    WHERE j.child_job_ids <> '' AND c.id::bigint IN (SELECT id FROM jobs)
    ON CONFLICT DO NOTHING;

-- job_changes (0001) names the column among those whose update other
-- admins hear of: it is made again without it, and a change of a job's
-- links is a change of the job to the admins caching it.
DROP TRIGGER job_changes ON jobs;
ALTER TABLE jobs DROP COLUMN child_job_ids;
CREATE TRIGGER job_changes AFTER UPDATE OF group_id, description, owner, alarm_emails, schedule_type, cron,
    interval_seconds, time_zone, misfire_strategy, route_strategy, handler, param, script_type, script_source,
    script_updated_at, block_strategy, timeout_seconds, retry_count, retry_delay_seconds, retry_backoff,
    alarm_webhook_url, alarm_every_failure, enabled, updated_at OR DELETE ON jobs
    FOR EACH ROW EXECUTE FUNCTION job_changes();
CREATE FUNCTION job_children_changes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_changes (job_id, stopped) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.parent_id ELSE NEW.parent_id END, 0);
    RETURN NULL;
END $$;
CREATE TRIGGER job_children_changes AFTER INSERT OR UPDATE OR DELETE ON job_children
    FOR EACH ROW EXECUTE FUNCTION job_children_changes();

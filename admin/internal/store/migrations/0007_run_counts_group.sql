-- The dashboard is scoped to a MEMBER's groups (issue 13): run_counts
-- (migration 0005) gets the runs' group in its key, so a scoped dashboard
-- costs what a global one does. Rebuilt from the runs it had counted (those
-- up to run_counts_upto), with its triggers.

DROP TRIGGER run_counts_update;
DROP TRIGGER run_counts_delete;
DROP TABLE run_counts;

-- How many runs with an id up to run_counts_upto.id, of each group,
-- scheduled in each 15-minute bucket (scheduled_at / 900000, unix
-- milliseconds), have each status.
CREATE TABLE run_counts (
    bucket   INTEGER NOT NULL,
    group_id INTEGER NOT NULL,
    status   INTEGER NOT NULL,
    n        INTEGER NOT NULL,
    PRIMARY KEY (bucket, group_id, status)
) WITHOUT ROWID;

INSERT INTO run_counts (bucket, group_id, status, n)
    SELECT scheduled_at / 900000, group_id, status, count(*) FROM runs
    WHERE id <= (SELECT id FROM run_counts_upto) GROUP BY 1, 2, 3;

-- Status changes and deletes (retention, DeleteRuns) of counted runs. A
-- run's group never changes.
CREATE TRIGGER run_counts_update AFTER UPDATE OF status, scheduled_at ON runs
    WHEN OLD.id <= (SELECT id FROM run_counts_upto)
        AND (OLD.status IS NOT NEW.status OR OLD.scheduled_at / 900000 IS NOT NEW.scheduled_at / 900000) BEGIN
    UPDATE run_counts SET n = n - 1 WHERE bucket = OLD.scheduled_at / 900000 AND group_id = OLD.group_id AND status = OLD.status;
    INSERT INTO run_counts (bucket, group_id, status, n) VALUES (NEW.scheduled_at / 900000, NEW.group_id, NEW.status, 1)
        ON CONFLICT (bucket, group_id, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER run_counts_delete AFTER DELETE ON runs
    WHEN OLD.id <= (SELECT id FROM run_counts_upto) BEGIN
    UPDATE run_counts SET n = n - 1 WHERE bucket = OLD.scheduled_at / 900000 AND group_id = OLD.group_id AND status = OLD.status;
END;

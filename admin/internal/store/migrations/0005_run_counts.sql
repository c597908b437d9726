-- API reads never slow the scheduler (issue 13): the dashboard's run
-- counts, kept as runs change instead of counted over the runs table.

-- How many runs with an id up to run_counts_upto.id, scheduled in each
-- 15-minute bucket (scheduled_at / 900000, unix milliseconds), have each
-- status. 15 minutes divides every zone offset in use today, so a day in
-- any zone is whole buckets; CountRuns counts the runs of a partial bucket
-- at a range's edges from the runs table.
CREATE TABLE run_counts (
    bucket INTEGER NOT NULL,
    status INTEGER NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (bucket, status)
) WITHOUT ROWID;

-- Runs after this id are not in run_counts yet: CountRuns counts them over
-- the runs table (a short range of ids), and the store folds them in every
-- second once settled, leaving out at most 100,000 (Store.foldRunCounts).
-- Inserts have no trigger: a trigger on
-- INSERT makes SQLite open a statement journal for every run inserted,
-- which doubled the cost of the scan's claims (BENCHMARKS.md).
CREATE TABLE run_counts_upto (id INTEGER NOT NULL);
INSERT INTO run_counts_upto (id) SELECT coalesce(max(id), 0) FROM runs;

-- Status changes and deletes (retention, DeleteRuns) of counted runs.
CREATE TRIGGER run_counts_update AFTER UPDATE OF status, scheduled_at ON runs
    WHEN OLD.id <= (SELECT id FROM run_counts_upto)
        AND (OLD.status IS NOT NEW.status OR OLD.scheduled_at / 900000 IS NOT NEW.scheduled_at / 900000) BEGIN
    UPDATE run_counts SET n = n - 1 WHERE bucket = OLD.scheduled_at / 900000 AND status = OLD.status;
    INSERT INTO run_counts (bucket, status, n) VALUES (NEW.scheduled_at / 900000, NEW.status, 1)
        ON CONFLICT (bucket, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER run_counts_delete AFTER DELETE ON runs
    WHEN OLD.id <= (SELECT id FROM run_counts_upto) BEGIN
    UPDATE run_counts SET n = n - 1 WHERE bucket = OLD.scheduled_at / 900000 AND status = OLD.status;
END;

-- The runs an existing database already has.
INSERT INTO run_counts (bucket, status, n)
    SELECT scheduled_at / 900000, status, count(*) FROM runs GROUP BY 1, 2;

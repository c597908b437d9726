-- A job's child jobs (fired after each of its runs succeeds) are rows of
-- job_children, not comma-separated text in jobs.child_job_ids (issue 36
-- item 5): the parent lookup that refuses deleting a child job reads the
-- child_id index instead of every job, and the links are foreign keys.
-- position keeps the order the job lists them in. Deleting a job deletes
-- its own links; a job that another lists as a child cannot be deleted
-- (the store says which lists it first). The number 0022 is PostgreSQL's
-- alone: the runner applies each file whose number it has not recorded.
CREATE TABLE job_children (
    parent_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    child_id  INTEGER NOT NULL REFERENCES jobs (id),
    position  INTEGER NOT NULL,
    PRIMARY KEY (parent_id, position),
    UNIQUE (child_id, parent_id)
) WITHOUT ROWID;
-- The text held well-formed ids (the store wrote them): as a JSON array
-- they are the links in order. A child listed twice keeps its first place;
-- one that no longer exists fired nothing and is left out.
INSERT OR IGNORE INTO job_children (parent_id, child_id, position)
    SELECT j.id, c.value, c.key FROM jobs AS j, json_each('[' || j.child_job_ids || ']') AS c
    WHERE j.child_job_ids <> '' AND c.value IN (SELECT id FROM jobs);
ALTER TABLE jobs DROP COLUMN child_job_ids;

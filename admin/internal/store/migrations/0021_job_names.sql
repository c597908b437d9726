-- Job names (issue 35 item 5, jobs as code): optional, unique within the
-- job's group when set; `carillon apply` identifies a job by its group's
-- app name and its name. Jobs without a name are not in the index.
ALTER TABLE jobs ADD COLUMN name TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX jobs_group_name ON jobs (group_id, name) WHERE name <> '';

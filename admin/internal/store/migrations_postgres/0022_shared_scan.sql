-- Admins sharing the database share the due jobs and workflows (issue 36,
-- store/partition.go): each scans the buckets it owns (id % 1024). The
-- scan's indexes hold the bucket, so that PostgreSQL checks it on the
-- index's entries and reads the rows of the admin's own buckets only.
DROP INDEX jobs_due;
CREATE INDEX jobs_due ON jobs (next_fire_at, group_id, (id % 1024)) WHERE enabled = 1 AND next_fire_at IS NOT NULL;
DROP INDEX workflows_due;
CREATE INDEX workflows_due ON workflows (next_fire_at, (id % 1024)) WHERE enabled = 1 AND next_fire_at IS NOT NULL;

-- A job's or workflow's bucket scatters consecutive ids (store.BucketOf:
-- id * 633 % 1024) instead of id % 1024, under which the first few hundred
-- jobs of a cluster all fell in the first admin's range. The scan's
-- indexes hold the new expression, as the shared scan's queries write it.
DROP INDEX jobs_due;
CREATE INDEX jobs_due ON jobs (next_fire_at, group_id, ((id * 633) % 1024)) WHERE enabled = 1 AND next_fire_at IS NOT NULL;
DROP INDEX workflows_due;
CREATE INDEX workflows_due ON workflows (next_fire_at, ((id * 633) % 1024)) WHERE enabled = 1 AND next_fire_at IS NOT NULL;

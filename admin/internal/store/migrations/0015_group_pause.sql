-- Pausing a group (issue 34): when it was paused; null while it is not.
-- The scan leaves the jobs and workflows of a paused group unclaimed, and
-- the claim of pending runs leaves theirs pending.
ALTER TABLE groups ADD COLUMN paused_at INTEGER;
-- The paused groups, which the scan's and the claim's statements exclude.
CREATE INDEX groups_paused ON groups (id) WHERE paused_at IS NOT NULL;
-- The scan's count of the jobs due (CountDue) and its next fire read
-- jobs_due only: with group_id in it, leaving out the jobs of paused
-- groups needs no read of their rows.
DROP INDEX jobs_due;
CREATE INDEX jobs_due ON jobs (next_fire_at, group_id) WHERE enabled = 1 AND next_fire_at IS NOT NULL;

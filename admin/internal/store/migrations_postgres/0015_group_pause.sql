-- Pausing a group (issue 34): when it was paused; null while it is not.
-- The scan leaves the jobs and workflows of a paused group unclaimed, and
-- the claim of pending runs leaves theirs pending.
ALTER TABLE groups ADD COLUMN paused_at BIGINT;
-- The paused groups, which the scan's and the claim's statements exclude.
CREATE INDEX groups_paused ON groups (id) WHERE paused_at IS NOT NULL;

-- Per-group executor tokens (issue 13): a group with its own token accepts
-- only that token from its executors, and the admin sends it to them; ''
-- means the group uses the global executor token. Kept in the clear, as
-- the global token is in settings: the admin must send it.
ALTER TABLE groups ADD COLUMN executor_token TEXT NOT NULL DEFAULT '';

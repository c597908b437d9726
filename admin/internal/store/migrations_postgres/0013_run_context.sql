-- Context between workflow nodes (issue 33): what a run's handler published
-- (RunResult.outputs) and what its run was given (RunRequest.inputs, the
-- merged outputs of its node's dependencies), each a JSON object of
-- strings; NULL when none.
ALTER TABLE runs ADD COLUMN outputs TEXT;
ALTER TABLE runs ADD COLUMN inputs TEXT;

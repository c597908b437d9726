-- xxl-job executors (issue 16): a group's executor protocol (the
-- ExecutorProtocol enum: 1 CARILLON, 2 XXL_JOB) and whether its script
-- jobs are sent to its executors with their source (0 no, 1 yes).
ALTER TABLE groups ADD COLUMN executor_protocol INTEGER NOT NULL DEFAULT 1;
ALTER TABLE groups ADD COLUMN allow_scripts INTEGER NOT NULL DEFAULT 0;

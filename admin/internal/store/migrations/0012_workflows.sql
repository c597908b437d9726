-- Workflows (issue 33): jobs in a DAG with fan-in.
CREATE TABLE workflows (
    id               INTEGER PRIMARY KEY,
    group_id         INTEGER NOT NULL REFERENCES groups (id),
    name             TEXT    NOT NULL,
    description      TEXT    NOT NULL DEFAULT '',
    schedule_type    INTEGER NOT NULL,
    cron             TEXT    NOT NULL DEFAULT '',
    interval_seconds INTEGER NOT NULL DEFAULT 0,
    time_zone        TEXT    NOT NULL DEFAULT '',
    misfire_strategy INTEGER NOT NULL DEFAULT 0,
    block_strategy   INTEGER NOT NULL DEFAULT 0,
    enabled          INTEGER NOT NULL DEFAULT 0,
    last_fire_at     INTEGER,
    next_fire_at     INTEGER,                     -- NULL: nothing scheduled
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE UNIQUE INDEX workflows_name ON workflows (group_id, name);
-- The scheduler's scan of workflows, as jobs_due is of jobs.
CREATE INDEX workflows_due ON workflows (next_fire_at) WHERE enabled = 1 AND next_fire_at IS NOT NULL;

-- A workflow's nodes, in its order (position).
CREATE TABLE workflow_nodes (
    workflow_id INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL,
    node_key    TEXT    NOT NULL,
    job_id      INTEGER NOT NULL,
    depends_on  TEXT    NOT NULL DEFAULT '', -- newline-separated keys
    param       TEXT,                        -- NULL: the job's
    PRIMARY KEY (workflow_id, position)
);
CREATE INDEX workflow_nodes_job ON workflow_nodes (job_id);

-- Runs of workflows. Each node's runs are ordinary runs (runs.workflow_run_id).
CREATE TABLE workflow_runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id   INTEGER NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    status        INTEGER NOT NULL,
    scheduled_at  INTEGER NOT NULL,
    trigger_type  INTEGER NOT NULL,
    param         TEXT,                      -- NULL: the nodes' own
    message       TEXT    NOT NULL DEFAULT '',
    attempt       INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    started_at    INTEGER,
    finished_at   INTEGER
);
-- Exactly once per scheduled instant, as runs_fire is for jobs.
CREATE UNIQUE INDEX workflow_runs_fire ON workflow_runs (workflow_id, scheduled_at) WHERE trigger_type IN (1, 5);
CREATE INDEX workflow_runs_workflow ON workflow_runs (workflow_id, id);
-- Workflow runs still active (1 = PENDING, 2 = RUNNING), for block strategies.
CREATE INDEX workflow_runs_active ON workflow_runs (workflow_id, id) WHERE status IN (1, 2);

-- The nodes of each workflow run, copied from its workflow when it was made.
CREATE TABLE workflow_node_runs (
    workflow_run_id INTEGER NOT NULL REFERENCES workflow_runs (id) ON DELETE CASCADE,
    position        INTEGER NOT NULL,
    node_key        TEXT    NOT NULL,
    job_id          INTEGER NOT NULL,
    depends_on      TEXT    NOT NULL DEFAULT '',
    param           TEXT,
    status          INTEGER NOT NULL,           -- a RunStatus
    run_id          INTEGER NOT NULL DEFAULT 0, -- the latest run (shard 0)
    first_run_id    INTEGER NOT NULL DEFAULT 0, -- the first run of this attempt: its shards and retries come after
    attempt         INTEGER NOT NULL DEFAULT 0,
    message         TEXT    NOT NULL DEFAULT '',
    started_at      INTEGER,
    finished_at     INTEGER,
    PRIMARY KEY (workflow_run_id, position)
);
CREATE UNIQUE INDEX workflow_node_runs_key ON workflow_node_runs (workflow_run_id, node_key);

-- A node's runs name their workflow run and node; 0 and '' outside workflows.
ALTER TABLE runs ADD COLUMN workflow_run_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN workflow_node TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_workflow ON runs (workflow_run_id, workflow_node) WHERE workflow_run_id <> 0;

-- Executor groups: the executors of one app_name.
CREATE TABLE groups (
    id           INTEGER PRIMARY KEY,
    app_name     TEXT    NOT NULL UNIQUE,
    title        TEXT    NOT NULL,
    address_mode INTEGER NOT NULL,
    addresses    TEXT    NOT NULL DEFAULT '', -- MANUAL: newline-separated URLs
    created_at   INTEGER NOT NULL,            -- unix milliseconds, like every time here
    updated_at   INTEGER NOT NULL
);

-- Live registrations (heartbeats) of executors.
CREATE TABLE registry (
    app_name   TEXT    NOT NULL,
    address    TEXT    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (app_name, address)
) WITHOUT ROWID;

CREATE TABLE jobs (
    id                INTEGER PRIMARY KEY,
    group_id          INTEGER NOT NULL REFERENCES groups (id),
    description       TEXT    NOT NULL,
    owner             TEXT    NOT NULL DEFAULT '',
    alarm_emails      TEXT    NOT NULL DEFAULT '', -- newline-separated
    schedule_type     INTEGER NOT NULL,
    cron              TEXT    NOT NULL DEFAULT '',
    interval_seconds  INTEGER NOT NULL DEFAULT 0,
    time_zone         TEXT    NOT NULL DEFAULT '',
    misfire_strategy  INTEGER NOT NULL,
    route_strategy    INTEGER NOT NULL,
    handler           TEXT    NOT NULL DEFAULT '',
    param             TEXT    NOT NULL DEFAULT '',
    script_type       INTEGER NOT NULL DEFAULT 0,
    script_source     TEXT    NOT NULL DEFAULT '',
    script_updated_at INTEGER,
    block_strategy    INTEGER NOT NULL,
    timeout_seconds   INTEGER NOT NULL DEFAULT 0,
    retry_count       INTEGER NOT NULL DEFAULT 0,
    retry_delay_seconds INTEGER NOT NULL DEFAULT 0,
    retry_backoff     INTEGER NOT NULL DEFAULT 0,
    alarm_webhook_url TEXT    NOT NULL DEFAULT '',
    alarm_every_failure INTEGER NOT NULL DEFAULT 0,
    child_job_ids     TEXT    NOT NULL DEFAULT '', -- comma-separated ids
    enabled           INTEGER NOT NULL DEFAULT 0,
    last_fire_at      INTEGER,
    next_fire_at      INTEGER,                     -- NULL: nothing scheduled
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL
);
CREATE INDEX jobs_group ON jobs (group_id);
-- The scheduler's scan: enabled jobs by next fire.
CREATE INDEX jobs_due ON jobs (next_fire_at) WHERE enabled = 1 AND next_fire_at IS NOT NULL;

-- Executions, one row per fire per shard per attempt.
CREATE TABLE runs (
    -- AUTOINCREMENT: a run ID is never reused, even after the newest runs
    -- are deleted, since executors know runs by ID (logs, duplicate checks).
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id           INTEGER NOT NULL,
    group_id         INTEGER NOT NULL,
    executor_address TEXT    NOT NULL DEFAULT '',
    handler          TEXT    NOT NULL DEFAULT '',
    param            TEXT    NOT NULL DEFAULT '',
    shard_index      INTEGER NOT NULL DEFAULT 0,
    shard_total      INTEGER NOT NULL DEFAULT 1,
    trigger_type     INTEGER NOT NULL,
    scheduled_at     INTEGER NOT NULL,
    triggered_at     INTEGER,
    trigger_message  TEXT    NOT NULL DEFAULT '',
    status           INTEGER NOT NULL,
    message          TEXT    NOT NULL DEFAULT '',
    finished_at      INTEGER,
    attempt          INTEGER NOT NULL DEFAULT 0,
    due_at           INTEGER NOT NULL,            -- when a pending run is dispatched
    timeout_seconds  INTEGER NOT NULL DEFAULT 0,  -- the job's timeout when dispatched
    alarm_status     INTEGER NOT NULL DEFAULT 0,
    alarm_message    TEXT    NOT NULL DEFAULT ''
);
-- Exactly once per scheduled instant: a scheduled (or misfire) fire of a job
-- for one instant exists once per shard and attempt.
CREATE UNIQUE INDEX runs_fire ON runs (job_id, scheduled_at, shard_index, attempt)
    WHERE trigger_type IN (1, 5);
CREATE INDEX runs_job ON runs (job_id, id);
-- Runs still in flight (1 = RUNNING, 7 = PENDING) for the monitor and for
-- recovery. Settled runs leave the index, so it stays small and a run's
-- status changes touch no other index.
CREATE INDEX runs_active ON runs (status, id) WHERE status IN (1, 7);
CREATE INDEX runs_scheduled ON runs (scheduled_at);
CREATE INDEX runs_alarm ON runs (id) WHERE alarm_status = 1;

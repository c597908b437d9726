-- carillon:foreign_keys=off
-- Ids are never reused (issue 13). Groups, jobs, users and API tokens took
-- max(id)+1, so a deleted newest row's id went to the next new one: a
-- deleted group's runs showed to a MEMBER granted the new group, a deleted
-- job's runs appeared under the next job, a parent's child list pointed at
-- an unrelated job, audit targets became ambiguous. The tables are rebuilt
-- with AUTOINCREMENT, every row, id and index kept. The migration runs with
-- foreign keys off (dropping users would cascade to its sessions, tokens and
-- grants) and checks them before it commits.

CREATE TABLE groups_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    app_name     TEXT    NOT NULL UNIQUE,
    title        TEXT    NOT NULL,
    address_mode INTEGER NOT NULL,
    addresses    TEXT    NOT NULL DEFAULT '', -- MANUAL: newline-separated URLs
    created_at   INTEGER NOT NULL,            -- unix milliseconds, like every time here
    updated_at   INTEGER NOT NULL
);
INSERT INTO groups_new (id, app_name, title, address_mode, addresses, created_at, updated_at)
    SELECT id, app_name, title, address_mode, addresses, created_at, updated_at FROM groups;
DROP TABLE groups;
ALTER TABLE groups_new RENAME TO groups;

CREATE TABLE jobs_new (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO jobs_new SELECT * FROM jobs;
DROP TABLE jobs;
ALTER TABLE jobs_new RENAME TO jobs;
CREATE INDEX jobs_group ON jobs (group_id);
CREATE INDEX jobs_due ON jobs (next_fire_at) WHERE enabled = 1 AND next_fire_at IS NOT NULL;

CREATE TABLE users_new (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT    NOT NULL UNIQUE COLLATE NOCASE,
    password_hash TEXT    NOT NULL,
    role          INTEGER NOT NULL,            -- 1 ADMIN, 2 MEMBER, 3 VIEWER
    disabled      INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    last_login_at INTEGER
);
INSERT INTO users_new SELECT * FROM users;
DROP TABLE users;
ALTER TABLE users_new RENAME TO users;

CREATE TABLE api_tokens_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    token_hash   TEXT    NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,                      -- NULL: never
    last_used_at INTEGER,
    UNIQUE (user_id, name)
);
INSERT INTO api_tokens_new SELECT * FROM api_tokens;
DROP TABLE api_tokens;
ALTER TABLE api_tokens_new RENAME TO api_tokens;

-- Ids an existing database gave out and deleted are not given again: each
-- sequence starts past the ids still named anywhere (runs of deleted jobs
-- and groups, the audit log's users).
DELETE FROM sqlite_sequence WHERE name IN ('groups', 'jobs', 'users', 'api_tokens',
    'groups_new', 'jobs_new', 'users_new', 'api_tokens_new');
INSERT INTO sqlite_sequence (name, seq) SELECT 'groups', max(
    coalesce((SELECT max(id) FROM groups), 0), coalesce((SELECT max(group_id) FROM runs), 0),
    coalesce((SELECT max(group_id) FROM user_groups), 0));
INSERT INTO sqlite_sequence (name, seq) SELECT 'jobs', max(
    coalesce((SELECT max(id) FROM jobs), 0), coalesce((SELECT max(job_id) FROM runs), 0));
INSERT INTO sqlite_sequence (name, seq) SELECT 'users', max(
    coalesce((SELECT max(id) FROM users), 0), coalesce((SELECT max(user_id) FROM audit_log), 0));
INSERT INTO sqlite_sequence (name, seq) SELECT 'api_tokens', coalesce((SELECT max(id) FROM api_tokens), 0);

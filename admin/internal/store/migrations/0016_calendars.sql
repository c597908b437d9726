-- Calendars (issue 34): instants the schedules of the jobs naming them skip.
CREATE TABLE calendars (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL DEFAULT '',
    definition  TEXT    NOT NULL, -- JSON: calendar.Definition (kind, time_zone and the kind's fields)
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
ALTER TABLE jobs ADD COLUMN calendar_ids TEXT NOT NULL DEFAULT ''; -- comma-separated calendar ids

-- name: InsertCalendar :one
INSERT INTO calendars (name, description, definition, created_at, updated_at)
VALUES (sqlc.arg(name), sqlc.arg(description), sqlc.arg(definition), sqlc.arg(created_at), sqlc.arg(updated_at))
RETURNING id;

-- name: CalendarByID :one
SELECT id, name, description, definition, created_at, updated_at FROM calendars WHERE id = sqlc.arg(id);

-- name: Calendars :many
-- A page of calendars: those after after_id, in ID order.
SELECT id, name, description, definition, created_at, updated_at FROM calendars
WHERE id > sqlc.arg(after_id) ORDER BY id LIMIT CAST(sqlc.arg(max_rows) AS BIGINT);

-- name: UpdateCalendar :exec
UPDATE calendars SET name = sqlc.arg(name), description = sqlc.arg(description), definition = sqlc.arg(definition),
    updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id);

-- name: RescheduleCalendarJob :exec
-- A job's next fire after a calendar it uses changed (CalendarStore.Update).
UPDATE jobs SET next_fire_at = sqlc.arg(next_fire_at), updated_at = sqlc.arg(updated_at) WHERE id = sqlc.arg(id);

-- name: DeleteCalendar :execresult
DELETE FROM calendars WHERE id = sqlc.arg(id);

-- name: CalendarCount :one
-- 1 when calendar id exists, else 0 (calendarsExist).
SELECT count(*) FROM calendars WHERE id = sqlc.arg(id);

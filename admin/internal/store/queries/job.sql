-- name: GroupCap :one
-- A group's max_concurrency (groupCap); no row for no such group.
SELECT max_concurrency FROM groups WHERE id = sqlc.arg(id);

-- name: JobCount :one
-- 1 if job id exists, else 0 (jobExists).
SELECT count(*) FROM jobs WHERE id = sqlc.arg(id);

-- name: StartJob :execresult
-- Enables a stopped job; a started one is left as it is.
UPDATE jobs SET enabled = 1, next_fire_at = sqlc.narg(next_fire_at), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND enabled = 0;

-- name: StopJob :exec
-- Disables a started job; a stopped one is left as it is.
UPDATE jobs SET enabled = 0, next_fire_at = NULL, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND enabled = 1;

-- name: DeleteJob :execresult
DELETE FROM jobs WHERE id = sqlc.arg(id);

-- name: DeletePending :exec
-- Job job_id's own runs of status status (pending: dropPending); those of
-- workflow nodes are their workflow run's.
DELETE FROM runs WHERE job_id = sqlc.arg(job_id) AND status = sqlc.arg(status) AND workflow_run_id = 0;

-- name: DeleteChildLinks :exec
-- Job parent_id's links to its child jobs (setChildren).
DELETE FROM job_children WHERE parent_id = sqlc.arg(parent_id);

-- name: ParentJobs :many
-- The jobs that list job child_id as a child job (notAChild).
SELECT j.id, j.description FROM job_children AS c JOIN jobs AS j ON j.id = c.parent_id
WHERE c.child_id = sqlc.arg(child_id) ORDER BY j.id;

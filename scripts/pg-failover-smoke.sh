#!/usr/bin/env bash
# A failover smoke test of two admins over one PostgreSQL database (issue 19):
# admin A runs the demo executor, admin B is killed with SIGKILL every 4-6 s
# and restarted; 50 every-second jobs (cron "* * * * * ?") fire meanwhile.
# It then prints duplicated instants (want none), instants neither run nor
# recorded as misfires (want 0 missing) and the runs per status.
#   usage: PGURL=postgres://postgres@127.0.0.1:5432 scripts/pg-failover-smoke.sh [seconds]
# The binary, logs and pids go to a temporary directory; the database
# carillon_smoke is created and dropped.
set -euo pipefail
secs=${1:-40}
: "${PGURL:?set PGURL to a postgres:// URL of a user that may create databases (no database path)}"
dir=$(mktemp -d /tmp/carillon-smoke.XXXXXX)
go build -o "$dir/carillon" ./admin/cmd/carillon
psql "$PGURL/postgres" -qc "DROP DATABASE IF EXISTS carillon_smoke WITH (FORCE)" -c "CREATE DATABASE carillon_smoke"
db="$PGURL/carillon_smoke?sslmode=disable"
cd "$dir"
CARILLON_ADMIN_PASSWORD=smoke-password ./carillon serve --db "$db" --listen 127.0.0.1:18081 --demo >a.log 2>&1 & echo $! >a.pid
startb() { ./carillon serve --db "$db" --listen 127.0.0.1:18082 >>b.log 2>&1 & echo $! >b.pid; }
cleanup() { kill "$(cat a.pid)" "$(cat b.pid)" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 50); do psql "$db" -Atc "select count(*) from jobs" 2>/dev/null | grep -q 1 && break; sleep 0.2; done
startb
psql "$db" -qc "INSERT INTO jobs (group_id, description, schedule_type, cron, time_zone, misfire_strategy, route_strategy, handler,
  block_strategy, enabled, next_fire_at, created_at, updated_at)
  SELECT group_id, 'every second ' || g, 2, '* * * * * ?', time_zone, misfire_strategy, route_strategy, handler, block_strategy, 1,
  ((extract(epoch FROM now())::bigint) + 2) * 1000, created_at, updated_at FROM jobs, generate_series(1, 50) g WHERE id = 1"
end=$((SECONDS + secs)); kills=0
while [ $SECONDS -lt $end ]; do
  sleep $((4 + RANDOM % 3)); kill -9 "$(cat b.pid)"; kills=$((kills + 1)); sleep 0.5; startb
done
sleep 8
echo "kills of admin B: $kills"
psql "$db" -c "SELECT job_id, scheduled_at, count(*) FROM runs WHERE trigger_type IN (1, 5) GROUP BY 1, 2 HAVING count(*) > 1 LIMIT 5" \
  -c "WITH s AS (SELECT job_id, min(scheduled_at) a, max(scheduled_at) b, sum(greatest(missed_count, 1)) covered FROM runs
        WHERE job_id > 1 AND trigger_type IN (1, 5) GROUP BY 1)
      SELECT sum((b - a) / 1000 + 1) AS instants, sum(covered) AS run_or_recorded, sum((b - a) / 1000 + 1) - sum(covered) AS missing FROM s" \
  -c "SELECT status, count(*) FROM runs WHERE job_id > 1 GROUP BY 1 ORDER BY 1" \
  -c "SELECT count(DISTINCT claimed_by) AS admin_processes FROM runs"
cleanup; sleep 1
psql "$PGURL/postgres" -qc "DROP DATABASE carillon_smoke WITH (FORCE)"
echo "logs: $dir"

package store

// postgresDialect is PostgreSQL's SQL.
type postgresDialect struct{}

func (postgresDialect) migrations() string { return "migrations_postgres" }

// migrationStart takes a lock of the transaction, released when it ends or
// its connection does, before it reads the table of applied migrations.
func (postgresDialect) migrationStart() []string {
	return []string{`SELECT pg_advisory_xact_lock(7318201901)`, `CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY)`}
}

// equalFold compares lower() of both sides, as the unique index of users'
// names (lower(username)) does.
func (postgresDialect) equalFold(column, param string) string {
	return `lower(` + column + `) = lower(` + param + `)`
}

func (postgresDialect) likeFold() string { return `ILIKE` }

func (postgresDialect) idRows(param string) string {
	return `SELECT value::bigint FROM jsonb_array_elements_text(` + param + `::jsonb) AS value`
}

func (postgresDialect) notIndexed() string { return `` }
func (postgresDialect) forUpdate() string  { return ` FOR UPDATE` }
func (postgresDialect) skipLocked() string { return ` FOR UPDATE SKIP LOCKED` }

func (postgresDialect) lockRows(table, ids string) string {
	return `SELECT id FROM ` + table + ` WHERE id IN (` + ids + `) ORDER BY id FOR UPDATE`
}

// postgresHot are PostgreSQL's hot statements (stmts_postgres.go),
// settling results and storing runs as JSON lists, one statement each.
var postgresHot = hotSQL{
	claimRuns:     pgClaimRunsSQL,
	recordRuns:    pgRecordRunsSQL,
	recordSent:    pgRecordSentSQL,
	routeRuns:     pgRouteRunsSQL,
	shardTotals:   pgShardTotalsSQL,
	advanceJobs:   pgAdvanceJobsSQL,
	jobsByID:      pgJobsByIDSQL,
	resultRuns:    pgResultRunsSQL,
	laterNote:     pgLaterNoteSQL,
	fixDelayNext:  pgFixDelayNextSQL,
	settleRuns:    pgSettleRunsSQL,
	insertRunList: pgInsertRunListSQL,
}

func (postgresDialect) hot() *hotSQL { return &postgresHot }

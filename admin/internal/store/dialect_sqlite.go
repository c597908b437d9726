package store

// sqliteDialect is SQLite's SQL.
type sqliteDialect struct{}

func (sqliteDialect) migrations() string { return "migrations" }

// migrationStart needs no lock: the admin holds the file's (Open).
func (sqliteDialect) migrationStart() []string {
	return []string{`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`}
}

// equalFold compares with COLLATE NOCASE, which the NOCASE indexes serve.
func (sqliteDialect) equalFold(column, param string) string {
	return column + ` = ` + param + ` COLLATE NOCASE`
}

// likeFold is LIKE: SQLite's ignores the case of ASCII letters.
func (sqliteDialect) likeFold() string { return `LIKE` }

func (sqliteDialect) idRows(param string) string {
	return `SELECT value FROM json_each(` + param + `)`
}

func (sqliteDialect) notIndexed() string                { return ` NOT INDEXED` }
func (sqliteDialect) forUpdate() string                 { return `` }
func (sqliteDialect) skipLocked() string                { return `` }
func (sqliteDialect) lockRows(table, ids string) string { return `` }

// sqliteHot are SQLite's hot statements (stmts.go), settling chunks of
// values.
var sqliteHot = hotSQL{
	claimRuns:   claimRunsSQL,
	recordRuns:  recordRunsSQL,
	recordSent:  recordSentSQL,
	routeRuns:   routeRunsSQL,
	shardTotals: shardTotalsSQL,
	advanceJobs: advanceJobsSQL,
	jobsByID:    jobsByIDSQL,
	resultRuns:  resultRunsSQL,
	laterNote:   laterNoteSQL,
	settleChunk: settleRunsSQL,
}

func (sqliteDialect) hot() *hotSQL { return &sqliteHot }

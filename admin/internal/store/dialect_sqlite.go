package store

import "strings"

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
	claimRuns:    claimRunsSQL,
	recordRuns:   recordRunsSQL,
	recordSent:   recordSentSQL,
	routeRuns:    routeRunsSQL,
	shardTotals:  shardTotalsSQL,
	advanceJobs:  advanceJobsSQL,
	jobsByID:     jobsByIDSQL,
	resultRuns:   resultRunsSQL,
	laterNote:    laterNoteSQL,
	fixDelayNext: fixDelayNextSQL,
	insertRuns:   func(n int) string { return insertRunsSQL(anonymousRows(n, runInsertArgs)) },
	insertPlain:  func(n int) string { return insertPlainSQL(anonymousRows(n, plainInsertArgs)) },
	settleChunk:  func(n int) string { return settleRunsSQL(anonymousRows(n, settleValues)) },
}

// anonymousRows returns n rows of width anonymous parameters each, bound
// by position: "(?, ?), (?, ?)". The store numbers its placeholders ($1)
// but in the multi-row statements of the fire path on SQLite: the driver
// asks SQLite for the name of each parameter it binds
// (sqlite3_bind_parameter_name), which walks the statement's list of
// named parameters, so that binding n numbered ones costs n² steps. A
// claim of 64 runs binds 1,856 values; numbered, binding took a third of
// the admin's CPU at 5,000 fires a second. Anonymous ones have no name to
// look for.
func anonymousRows(n, width int) string {
	var b strings.Builder
	b.Grow(n * (width*3 + 4))
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j := range width {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('?')
		}
		b.WriteByte(')')
	}
	return b.String()
}

func (sqliteDialect) hot() *hotSQL { return &sqliteHot }

package store

// The store's SQL is written so that each database runs the text it is
// given: placeholders are numbered ($1, $2, …), which both SQLite and
// PostgreSQL bind by number, and most statements read the same in both.
// What differs is a dialect's: the few fragments whose forms differ
// (case-insensitive comparisons, a JSON list of ids as rows, locking
// clauses, index hints) and the hot statements, written out for each
// database (stmts.go, stmts_postgres.go). A Store holds its dialect (s.d),
// chosen once when it opens.

// dialect is what the SQL of one database has of its own.
type dialect interface {
	// migrations is the folder of the database's embedded migrations.
	migrations() string
	// migrationStart are the statements that begin the transaction of
	// each migration: they create the table of applied migrations if it
	// is missing and, where several admins may open the database together,
	// make them migrate one after another.
	migrationStart() []string
	// equalFold is the condition that column equals param (a placeholder)
	// whatever their case, with the index that the column's uniqueness
	// whatever its case has, where it has one.
	equalFold(column, param string) string
	// likeFold is the operator of a LIKE that ignores case.
	likeFold() string
	// idRows is a subquery of the IDs in param, a JSON array of integers:
	// one row each, in one column, value.
	idRows(param string) string
	// notIndexed is the hint, written after a table's name, to read the
	// table without its indexes (by rowid): " NOT INDEXED", or nothing
	// where the database has no such hint.
	notIndexed() string
	// forUpdate is the locking clause of a read-then-write (" FOR
	// UPDATE"), or nothing where writers take one lock (SQLite's one
	// writer).
	forUpdate() string
	// skipLocked is forUpdate skipping the rows that another transaction
	// holds: a claim of rows another admin is claiming.
	skipLocked() string
	// lockRows is a statement that locks the rows of table whose IDs the
	// subquery ids selects, in id order, so that writers that need several
	// of them wait for each other instead of deadlocking; "" where no
	// statement is needed (SQLite's one writer).
	lockRows(table, ids string) string
	// hot is the texts of the hot statements (stmts.go).
	hot() *hotSQL
}

// hotSQL are the texts of the hot statements in one dialect, prepared
// once when the store opens (stmts).
type hotSQL struct {
	claimRuns, recordRuns, recordSent, routeRuns, shardTotals, advanceJobs string
	jobsByID, resultRuns, laterNote, fixDelayNext                          string
	// Runs are stored either by one statement taking them as a JSON list
	// of appendInsertArgs' values (insertRunList) or by chunks of n runs
	// bound as values (insertRuns(n), insertRunsSQL, n one of
	// insertChunks): one of the two is set.
	insertRunList string
	insertRuns    func(n int) string
	// insertPlain(n), where set, stores n plain runs (plainRun) bound as
	// values (insertPlainSQL), beside insertRuns.
	insertPlain func(n int) string
	// Results are settled either by one statement taking them as a JSON
	// list (settleRuns) or by chunks of insertChunks results bound as
	// values (settleChunk(n)): one of the two is set.
	settleRuns  string
	settleChunk func(n int) string
}

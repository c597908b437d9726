package main

import (
	"context"
	"database/sql"
	"os"
	"strconv"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, as the admin's store uses
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver, as the admin's store uses

	"github.com/carillonhq/carillon/admin/internal/store"
)

// openDB opens the admins' database for reading beside them: a SQLite
// file read-only, or a postgres:// URL.
func openDB(path string) (*sql.DB, error) {
	if store.IsPostgresURL(path) {
		return sql.Open("pgx", path)
	}
	return sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
}

// placeholder is the n-th query argument in the dialect of path's database.
func placeholder(path string, n int) string {
	if store.IsPostgresURL(path) {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// dbSize is the size of the database at path: a SQLite file with its WAL
// and shared-memory files, or a PostgreSQL database as it reports it; 0
// when unknown.
func dbSize(ctx context.Context, path string) int64 {
	var n int64
	if store.IsPostgresURL(path) {
		db, err := openDB(path)
		if err != nil {
			return 0
		}
		defer func() { _ = db.Close() }()
		if err := db.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
			return 0
		}
		return n
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

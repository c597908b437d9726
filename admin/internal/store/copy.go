package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// CopyOptions says what Copy copies besides the definitions.
type CopyOptions struct {
	// Runs copies the runs too, with the dashboard's run counts and the
	// database's identity (so executors take the copied run ids for the
	// same runs). Without it the PostgreSQL database starts with no run
	// history, under the new identity it was created with.
	Runs bool
}

// CopyCount is how many rows of one table Copy copied.
type CopyCount struct {
	Table string
	Rows  int64
}

// copyTables are the tables Copy copies, parents first. Sessions and
// executor registrations are not copied: users log in again, executors
// register again within seconds.
var copyTables = []struct {
	name string
	runs bool // copied with CopyOptions.Runs only
}{
	{name: "groups"}, {name: "users"}, {name: "user_groups"}, {name: "api_tokens"}, {name: "calendars"}, {name: "jobs"}, {name: "job_children"},
	{name: "workflows"}, {name: "workflow_nodes"}, {name: "settings"}, {name: "audit_log"},
	{name: "runs", runs: true}, {name: "run_counts", runs: true},
	{name: "workflow_runs", runs: true}, {name: "workflow_node_runs", runs: true},
}

// emptyCheckTables are the tables that must hold no row in a target of
// Copy (settings may hold the database_id its migration made).
var emptyCheckTables = []string{"groups", "users", "user_groups", "api_tokens", "sessions", "jobs", "job_children", "runs",
	"audit_log", "registry", "run_counts", "workflows", "workflow_runs", "calendars"}

// copiedAdmin is the admins row that the copied runs are claimed by: an
// admin whose lease ran out, so that the first admin to start adopts it and
// settles the runs the SQLite admin claimed and did not record as sent, as
// it would after a crash.
const copiedAdmin = "sqlite-copy"

// ErrNotEmpty is returned by Copy when the PostgreSQL database already
// holds Carillon data.
var ErrNotEmpty = errors.New("store: the PostgreSQL database is not empty")

// Copy copies the SQLite database file at from into the PostgreSQL
// database at to (a postgres:// URL), which must hold no Carillon data: it
// is migrated to the current schema, then groups, users, their group
// grants, API tokens, jobs, settings and the audit log (and, with
// opts.Runs, the runs) are copied in one transaction, every id kept, and
// each identity sequence advanced past the largest id the SQLite database
// ever gave out. It returns the rows copied per table.
//
// The SQLite database is opened like an admin opens it (Open), so Copy
// fails with ErrLocked while an admin serves it; its pending migrations are
// applied first. A target that holds any row fails with ErrNotEmpty, naming
// the tables.
func Copy(ctx context.Context, from, to string, opts CopyOptions) (_ []CopyCount, err error) {
	if IsPostgresURL(from) {
		return nil, errors.New("store: copy: the source must be a SQLite file, not a postgres:// URL")
	}
	if !IsPostgresURL(to) {
		return nil, errors.New("store: copy: the target must be a postgres:// or postgresql:// URL")
	}
	if _, err := os.Stat(from); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store: copy: %s: no such SQLite database", from)
	}
	src, err := Open(ctx, from)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, src.Close()) }()
	if err := migratePostgres(ctx, to); err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(to)
	if err != nil {
		return nil, fmt.Errorf("store: copy: %w", err)
	}
	dst, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: copy: connect to %s: %w", Redact(to), err)
	}
	defer func() { _ = dst.Close(context.Background()) }()

	// One snapshot of the source: the runs and the counts of them agree.
	stx, err := src.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("store: copy: read %s: %w", from, err)
	}
	defer func() { _ = stx.Rollback() }() //nolint:errcheck // a read-only transaction: nothing to undo

	tx, err := dst.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: copy: %w", err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }() // a no-op once committed
	counts, err := copyAll(ctx, stx, tx, opts)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("store: copy: commit: %w", err)
	}
	return counts, nil
}

// copyAll copies within the target's transaction tx, from the source's
// transaction stx.
func copyAll(ctx context.Context, stx *sql.Tx, tx pgx.Tx, opts CopyOptions) ([]CopyCount, error) {
	// An admin starting on the target meanwhile waits for the commit, then
	// finds the copied data (it would write its first user and settings).
	if _, err := tx.Exec(ctx, `LOCK TABLE groups, users, jobs, settings IN EXCLUSIVE MODE`); err != nil {
		return nil, fmt.Errorf("store: copy: lock the target's tables: %w", err)
	}
	var full []string
	for _, t := range emptyCheckTables {
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("store: copy: count %s: %w", t, err)
		}
		if n > 0 {
			full = append(full, fmt.Sprintf("%s has %d rows", t, n))
		}
	}
	var settings int64
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM settings WHERE name != 'database_id'`).Scan(&settings); err != nil {
		return nil, fmt.Errorf("store: copy: count settings: %w", err)
	}
	if settings > 0 {
		full = append(full, fmt.Sprintf("settings has %d rows", settings))
	}
	if len(full) > 0 {
		return nil, fmt.Errorf("%w (%s): copy only into a new, empty database", ErrNotEmpty, strings.Join(full, ", "))
	}

	var counts []CopyCount
	for _, t := range copyTables {
		if t.runs && !opts.Runs {
			continue
		}
		n, err := copyTable(ctx, stx, tx, t.name, opts)
		if err != nil {
			return nil, fmt.Errorf("store: copy %s: %w", t.name, err)
		}
		counts = append(counts, CopyCount{Table: t.name, Rows: n})
	}
	if opts.Runs {
		var upto int64
		if err := stx.QueryRowContext(ctx, `SELECT id FROM run_counts_upto`).Scan(&upto); err != nil {
			return nil, fmt.Errorf("store: copy run_counts_upto: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE run_counts_upto SET id = $1`, upto); err != nil {
			return nil, fmt.Errorf("store: copy run_counts_upto: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO admins (id, started_at, lease_until) VALUES ($1, $2, 0)`,
			copiedAdmin, time.Now().UnixMilli()); err != nil {
			return nil, fmt.Errorf("store: copy: the runs' admin: %w", err)
		}
	}
	if err := advanceSequences(ctx, stx, tx, opts); err != nil {
		return nil, err
	}
	return counts, nil
}

// copyTable copies one table's rows with COPY, every column of the SQLite
// table into the PostgreSQL column of the same name, and returns how many.
func copyTable(ctx context.Context, stx *sql.Tx, tx pgx.Tx, table string, opts CopyOptions) (int64, error) {
	pgCols := map[string]bool{}
	rows, err := tx.Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1`, table)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			rows.Close()
			return 0, err
		}
		pgCols[c] = true
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	q := `SELECT * FROM ` + table //nolint:gosec // table is one of copyTables' names
	switch table {
	case "settings":
		if !opts.Runs { // the target keeps the identity it was created with
			q += ` WHERE name != 'database_id'`
		}
	case "runs", "audit_log", "jobs", "groups", "users", "api_tokens", "workflows", "workflow_runs", "calendars":
		q += ` ORDER BY id`
	}
	src, err := stx.QueryContext(ctx, q)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	cols, err := src.Columns()
	if err != nil {
		return 0, err
	}
	for _, c := range cols {
		if !pgCols[c] {
			return 0, fmt.Errorf("column %s has no counterpart in the PostgreSQL schema", c)
		}
	}
	if table == "settings" && opts.Runs {
		// The target's migration made a database_id: the copied one
		// replaces it.
		if _, err := tx.Exec(ctx, `DELETE FROM settings WHERE name = 'database_id'`); err != nil {
			return 0, err
		}
	}
	rs := &rowSource{rows: src, vals: make([]any, len(cols))}
	names := cols
	if table == "runs" {
		names = append(append([]string(nil), cols...), "claimed_by")
		rs.extra = []any{copiedAdmin}
	}
	n, err := tx.CopyFrom(ctx, pgx.Identifier{table}, names, rs)
	if err != nil {
		return 0, err
	}
	return n, src.Err()
}

// rowSource feeds the rows of a SQLite query to pgx's COPY.
type rowSource struct {
	rows  *sql.Rows
	vals  []any
	extra []any // appended to every row
	err   error
}

func (r *rowSource) Next() bool {
	if r.err != nil || !r.rows.Next() {
		return false
	}
	ptrs := make([]any, len(r.vals))
	for i := range r.vals {
		ptrs[i] = &r.vals[i]
	}
	if r.err = r.rows.Scan(ptrs...); r.err != nil {
		return false
	}
	for i, v := range r.vals {
		if b, ok := v.([]byte); ok { // SQLite TEXT read as bytes: the column is TEXT here too
			r.vals[i] = string(b)
		}
	}
	return true
}

func (r *rowSource) Values() ([]any, error) {
	if len(r.extra) == 0 {
		return r.vals, nil
	}
	return append(append(make([]any, 0, len(r.vals)+len(r.extra)), r.vals...), r.extra...), nil
}

func (r *rowSource) Err() error { return errors.Join(r.err, r.rows.Err()) }

// advanceSequences moves each copied table's identity past the largest id
// the SQLite database gave out (sqlite_sequence remembers those of deleted
// rows too), so that no id is given twice.
func advanceSequences(ctx context.Context, stx *sql.Tx, tx pgx.Tx, opts CopyOptions) error {
	tables := []string{"groups", "users", "api_tokens", "jobs", "audit_log", "workflows", "calendars"}
	if opts.Runs {
		tables = append(tables, "runs", "workflow_runs")
	}
	for _, t := range tables {
		var top int64
		err := stx.QueryRowContext(ctx, `SELECT max(coalesce((SELECT max(id) FROM `+t+`), 0),
			coalesce((SELECT seq FROM sqlite_sequence WHERE name = $1), 0))`, t).Scan(&top)
		if err != nil {
			return fmt.Errorf("store: copy: the largest id of %s: %w", t, err)
		}
		if top == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, 'id'), $2)`, t, top); err != nil {
			return fmt.Errorf("store: copy: advance the ids of %s: %w", t, err)
		}
	}
	return nil
}

// migratePostgres applies the pending migrations of the PostgreSQL
// database at url, as an admin does when it opens it, without taking a
// lease there.
func migratePostgres(ctx context.Context, url string) (err error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("store: copy: %w", err)
	}
	s := newStore(&db{pg: &pgState{}, d: postgresDialect{}})
	s.w = sql.OpenDB(stdlib.GetConnector(*cfg))
	s.w.SetMaxOpenConns(1)
	defer func() { err = errors.Join(err, s.w.Close()) }()
	if err := s.migrate(ctx); err != nil {
		return fmt.Errorf("store: copy: migrate %s: %w", Redact(url), err)
	}
	return nil
}

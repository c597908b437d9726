// Package store keeps Carillon's state: groups, executor registrations,
// jobs and runs. It is the only package with SQL.
//
// The database is one SQLite file by default. It runs in WAL mode with one
// writer connection (every write transaction starts IMMEDIATE, so a
// read-then-write never fails with SQLITE_BUSY) and a small pool of
// readers. Times are stored as unix milliseconds. Migrations are embedded
// and applied in order by Open.
//
// Open of a postgres:// URL keeps the same state in PostgreSQL, which
// several admins may share (postgres.go): the same statements where the
// two databases read them alike, each database's own where they differ
// (its dialect, dialect.go), the same semantics, and what sharing needs
// besides: claims that skip the rows another admin holds, leases of admins
// (lease.go), and caches that follow the other admins' writes (follow.go).
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	"github.com/carillonhq/carillon/internal/testsignal"
)

//go:embed migrations/*.sql migrations_postgres/*.sql
var migrations embed.FS

// Store is Carillon's database. It is safe for concurrent use.
//
// Its own methods run the database: its loops, leases and partition, its
// health and its size. What it keeps is read and written through one
// field per aggregate: Jobs, Runs, Groups and so on.
type Store struct {
	*db

	Jobs      JobStore
	Fires     FireStore
	Runs      RunStore
	Groups    GroupStore
	Registry  RegistryStore
	Workflows WorkflowStore
	Calendars CalendarStore
	Alarms    AlarmStore
	Users     UserStore
	Auth      AuthStore
	Audit     AuditStore
	Settings  SettingStore
}

// newStore returns the Store over d, its aggregates wired to it.
func newStore(d *db) *Store {
	return &Store{db: d,
		Jobs: JobStore{d}, Fires: FireStore{d}, Runs: RunStore{d}, Groups: GroupStore{d},
		Registry: RegistryStore{d}, Workflows: WorkflowStore{d}, Calendars: CalendarStore{d},
		Alarms: AlarmStore{d}, Users: UserStore{d}, Auth: AuthStore{d}, Audit: AuditStore{d},
		Settings: SettingStore{d},
	}
}

// db is the connections and state that the Store and its aggregates share.
type db struct {
	w    *sql.DB // the one writer connection
	r    *sql.DB // readers of the fire path (scheduler, trigger, monitor)
	api  *sql.DB // readers of the management API (WithAPIReads)
	q    stmts   // the fire path's statements, prepared once
	d    dialect // the database's SQL where it differs (dialect.go)
	lock *fileLock
	// routing counts changes to groups and the registry, for caches of
	// who runs a group's jobs (RoutingVersion).
	routing atomic.Int64
	stops   stops
	jobs    jobCache // job definitions for the fire path
	// health is the outcome of the last write transaction (Writable).
	health writeHealth
	// databaseID is this database's identity (DatabaseID).
	databaseID string
	// path is the database file's absolute path (Size).
	path string
	// writes counts and times write transactions (writestats.go).
	writes writeStats
	// changed is emitted after each committed write (Changed).
	changed testsignal.Signal

	// pg is set on PostgreSQL: the fields after it are its own.
	pg *pgState
}

// RoutingVersion changes whenever a group or an executor registration is
// written through this Store (the only writer of the file: see Open). A
// cache of a group's executors read after the version was v is current
// while the version is still v, except for registrations expiring with
// time.
func (s *Store) RoutingVersion() int64 { return s.routing.Load() }

// DatabaseID returns the identity of the database, made when it was
// created (32 hex digits). Run ids are unique within one database only;
// executors keep the runs of different databases apart by it.
func (s *Store) DatabaseID() string { return s.databaseID }

// Open opens (creating if needed) the database file at path, takes the
// file's admin lock and applies pending migrations. A second Open of the
// same path, from this or another process, fails with ErrLocked until the
// first Store is closed.
//
// Open fails with an error matching ErrReadOnly or ErrFull, naming the
// path, when it cannot write the database: it makes a real write first.
//
// A path that is a postgres:// or postgresql:// URL opens that PostgreSQL
// database instead (OpenPostgres), which other admins may share.
//
// Open starts nothing: an admin runs the store's loops (Loops) while it
// serves.
func Open(ctx context.Context, path string) (*Store, error) {
	if IsPostgresURL(path) {
		return OpenPostgres(ctx, path)
	}
	return open(ctx, path, "")
}

// open is Open with the writer connection opened in SQLite's mode
// writerMode ("" for read-write; tests use "ro" to stand for a database
// the admin cannot write, which chmod cannot make for root).
func open(ctx context.Context, path, writerMode string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	lock, err := lockFile(abs + ".lock")
	if err != nil {
		return nil, err
	}
	// The file holds the executor token and password hashes: a new one is
	// readable by its owner only, and SQLite gives its -wal and -shm files
	// the database file's permissions.
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil { //nolint:gosec // the database path comes from the operator's --db
		_ = f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		_ = lock.release()
		return nil, fmt.Errorf("store: create %s: %w", path, err)
	}
	s := newStore(&db{lock: lock, path: abs, d: sqliteDialect{}})
	// The writer checkpoints the WAL itself only past 10,000 pages (40 MiB);
	// Store.checkpoints does most of it, off the writer's path. Its
	// statement journals stay in memory (temp_store): an insert into runs
	// (AUTOINCREMENT, a unique index) or an update firing run_counts'
	// trigger journals every page it touches, and in a file that is a
	// write(2) per page, which once halved the claims' throughput
	// (BENCHMARKS.md, issue 20). A statement's journal holds only the
	// pages it changed. The readers keep temp files, for large sorts.
	if s.w, err = openDB(abs, writerMode, "immediate", 1, "wal_autocheckpoint(10000)", "temp_store(MEMORY)"); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	if s.r, err = openDB(abs, "", "deferred", 4); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	if s.api, err = openDB(abs, "", "deferred", APIReadConns); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	if err := s.probe(ctx, abs); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	if err := s.migrate(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	if s.databaseID, err = dbsqlc.New(s.r).Setting(ctx, "database_id"); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("store: database id: %w", err)
	}
	if err := s.prepare(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("store: prepare: %w", err)
	}
	return s, nil
}

func openDB(path, mode, txlock string, conns int, pragmas ...string) (*sql.DB, error) {
	q := url.Values{}
	if mode != "" {
		q.Set("mode", mode)
	}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "cache_size(-32768)") // 32 MiB per connection, for the hot run and job pages
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", txlock)
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// Close closes the database and releases the admin lock; over
// PostgreSQL it gives up this admin's lease first. Stop the store's loops
// (Loops) before.
func (s *Store) Close() error {
	var errs []error
	if s.pg != nil {
		errs = append(errs, s.closePostgres())
	}
	s.q.close()
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.api != nil {
		errs = append(errs, s.api.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.release())
	}
	return errors.Join(errs...)
}

func (s *db) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, s.d.migrations()+"/*.sql")
	if err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		base := filepath.Base(name)
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("store: migrate: bad migration name %s", base)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		// A migration that rebuilds tables others reference runs with
		// foreign keys off, as SQLite's ALTER TABLE documentation says (a
		// DROP TABLE would cascade), and checks them before committing.
		fkOff := strings.HasPrefix(string(body), "-- carillon:foreign_keys=off\n")
		if fkOff {
			if _, err := s.w.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
				return fmt.Errorf("store: migrate %s: %w", base, err)
			}
		}
		err = s.write(ctx, func(tx *sql.Tx) error {
			for _, q := range s.d.migrationStart() {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return err
				}
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = $1`, version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, string(body)); err != nil {
				return err
			}
			if fkOff {
				rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
				if err != nil {
					return err
				}
				bad := rows.Next()
				if err := errors.Join(rows.Err(), rows.Close()); err != nil { //nolint:sqlclosecheck // closed on every path before the transaction's next statement, which a deferred Close would come after
					return err
				}
				if bad {
					return errors.New("foreign keys do not hold after the migration")
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, version)
			return err
		})
		if fkOff {
			if _, onErr := s.w.ExecContext(ctx, `PRAGMA foreign_keys = ON`); onErr != nil && err == nil {
				err = onErr
			}
		}
		if err != nil {
			return fmt.Errorf("store: migrate %s: %w", base, err)
		}
	}
	return nil
}

// write runs fn in a write transaction and commits it if fn returns nil.
// An error of a full disk or a read-only database matches ErrFull or
// ErrReadOnly, and is remembered for Writable.
func (s *db) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	err := storageError(s.writeTx(ctx, fn))
	s.health.record(err)
	if err == nil {
		s.changed.Emit()
	}
	return err
}

// exec runs one write statement outside a transaction.
func (s *db) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := s.w.ExecContext(ctx, query, args...)
	if err == nil {
		s.changed.Emit()
	}
	return res, err
}

// execQuery runs fn's one write statement of dbsqlc outside a
// transaction, as exec runs its statement.
func (s *db) execQuery(fn func(q *dbsqlc.Queries) error) error {
	err := fn(dbsqlc.New(s.w))
	if err == nil {
		s.changed.Emit()
	}
	return err
}

// Changed is emitted after each write this Store commits, so that a test
// of what reads the database waits for a change instead of polling.
// Until a test waits on it, an emission costs one atomic load.
func (s *Store) Changed() *testsignal.Signal { return &s.changed }

func (s *db) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	s.writes.waiting.Add(1)
	tx, err := s.w.BeginTx(ctx, nil)
	s.writes.waiting.Add(-1)
	if err != nil {
		return err
	}
	defer func(began time.Time) { s.writes.observe(time.Since(began)) }(time.Now())
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	audit, err := writeAudit(ctx, tx) // a management call's record, with its change
	if err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		if audit != nil {
			audit.forget()
		}
		return err
	}
	return nil
}

// millis converts t to unix milliseconds; the zero time is NULL.
func millis(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// boolInt is b as the 0 or 1 of the INTEGER columns that hold flags in
// both databases: PostgreSQL binds no bool to an integer.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// fromMillis converts unix milliseconds to a time; NULL is the zero time.
func fromMillis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64)
}

// joinLines and splitLines store string lists as newline-separated text.
func joinLines(ss []string) string { return strings.Join(ss, "\n") }

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

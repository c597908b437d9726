package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/carillonhq/carillon/internal/testsignal"
)

// PostgreSQL's connection pools of one admin. The writer has a pool, not
// one connection: PostgreSQL serializes conflicting writes itself, by row
// locks, and other admins write the same tables anyway.
const (
	pgWriteConns = 8
	pgReadConns  = 4
)

// pgState is what a Store over PostgreSQL has besides a SQLite one.
type pgState struct {
	// adminID names this admin process among those sharing the database:
	// its admins row and the claimed_by of the runs it claims.
	adminID string
	lease   lease
	// partition is the buckets of due jobs this admin owns (partition.go).
	partition partition
	// claimed counts the fires this admin claimed (FireStore.Claim), for
	// the rate it publishes with its lease.
	claimed atomic.Int64
	follow  follower
	// followed is emitted after each round of FollowLoop, for tests.
	followed testsignal.Signal
	// foldMarks are the largest run ids seen by the fold (settledMaxID),
	// oldest first; only the fold loop uses them.
	foldMarks []foldMark
}

// IsPostgresURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Shared reports whether other admins may share the database
// (PostgreSQL): claims then name this admin (AdminID), and the runs of an
// admin that died are adopted by the others (AdoptDeadAdmins).
func (s *Store) Shared() bool { return s.pg != nil }

// AdminID returns this admin's id among those sharing the database; ""
// over SQLite.
func (s *Store) AdminID() string {
	if s.pg == nil {
		return ""
	}
	return s.pg.adminID
}

// OpenPostgres opens the PostgreSQL database at url (a postgres:// URL,
// with pgx's parameters: sslmode, pool settings and the like), applies
// pending migrations and takes a lease for this admin in it (lease.go),
// which LeaseLoop renews. Any number of admins may open the same
// database.
//
// The database must exist; its user needs to create tables in it.
// PostgreSQL 13 or newer.
func OpenPostgres(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	id, err := newAdminID()
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	cfg.RuntimeParams["carillon.admin"] = id
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "carillon admin " + id
	}
	where := fmt.Sprintf("postgres %s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
	s := newStore(&db{pg: &pgState{adminID: id, partition: partition{adopt: make(chan struct{}, 1)}}, d: postgresDialect{}})
	connector := stdlib.GetConnector(*cfg)
	pool := func(conns int) *sql.DB {
		db := sql.OpenDB(connector)
		db.SetMaxOpenConns(conns)
		db.SetMaxIdleConns(conns)
		db.SetConnMaxLifetime(30 * time.Minute)
		return db
	}
	s.w, s.r, s.api = pool(pgWriteConns), pool(pgReadConns), pool(APIReadConns)
	if err := s.w.PingContext(ctx); err != nil {
		_ = s.closeDBs()
		return nil, fmt.Errorf("store: open %s: %w", where, err)
	}
	if err := s.migrate(ctx); err != nil {
		_ = s.closeDBs()
		return nil, fmt.Errorf("store: open %s: %w", where, err)
	}
	if s.databaseID, err = dbsqlc.New(s.r).Setting(ctx, "database_id"); err != nil {
		_ = s.closeDBs()
		return nil, fmt.Errorf("store: database id: %w", err)
	}
	if err := s.prepare(ctx); err != nil {
		_ = s.closeDBs()
		return nil, fmt.Errorf("store: prepare: %w", err)
	}
	if err := s.follow(ctx); err != nil { // where the change feed stands now
		_ = s.closeDBs()
		return nil, fmt.Errorf("store: open %s: %w", where, err)
	}
	if err := s.renewLease(ctx); err != nil {
		_ = s.closeDBs()
		return nil, fmt.Errorf("store: open %s: take a lease: %w", where, err)
	}
	_ = s.readPartition(ctx) // on failure, every bucket until the next renewal
	return s, nil
}

// newAdminID returns a random id for this admin process.
func newAdminID() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// closePostgres gives up the lease, so that another admin adopts this
// one's runs at once.
func (s *db) closePostgres() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.w == nil {
		return nil
	}
	_, err := s.w.ExecContext(ctx, `UPDATE admins SET lease_until = 0 WHERE id = $1`, s.pg.adminID)
	if err != nil {
		return fmt.Errorf("store: give up the lease: %w", err)
	}
	return nil
}

// closeDBs closes the connection pools of a Store that did not finish
// opening.
func (s *db) closeDBs() error {
	var errs []error
	for _, db := range []*sql.DB{s.w, s.r, s.api} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

// pgNow is the database's clock in unix milliseconds: leases compare
// times of one clock, whatever the admins' clocks say.
const pgNow = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`

// Redact returns db for a log: a PostgreSQL URL without its password.
func Redact(db string) string {
	if !IsPostgresURL(db) {
		return db
	}
	u, err := neturl.Parse(db)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

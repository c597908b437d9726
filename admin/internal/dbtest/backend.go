// Package dbtest gives the admin's tests a store over each database the
// admin runs on: a SQLite file in the test's temporary directory, or a new,
// empty PostgreSQL database on the server that CARILLON_TEST_POSTGRES
// names (admin/internal/pgtest). Backends runs a test once over each, as
// subtests named sqlite and postgres; the postgres one skips, saying so,
// where the variable is not set (a developer's go test ./...), and runs
// where it is (CI: .ci/run starts a server).
package dbtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// Backend is a kind of database the store runs over.
type Backend struct {
	// Name is "sqlite" or "postgres": the name of its subtest in Backends.
	Name  string
	newDB func(tb testing.TB) string
}

var (
	// SQLite is a SQLite file in the test's temporary directory: the
	// backend of the tests of what only SQLite has (its file, its lock,
	// its WAL, a failpoint inside its transactions).
	SQLite = Backend{Name: "sqlite", newDB: func(tb testing.TB) string {
		tb.Helper()
		return filepath.Join(tb.TempDir(), "carillon.db")
	}}
	// Postgres is a new database on the server that pgtest.EnvURL names,
	// dropped when the test ends; without that variable it skips the test.
	Postgres = Backend{Name: "postgres", newDB: pgtest.URL}
)

// DB returns a new, empty database of b for the test, as store.Open takes
// it: a file path or a postgres:// URL.
func (b Backend) DB(tb testing.TB) string {
	tb.Helper()
	return b.newDB(tb)
}

// Open opens a store on a new, empty database of b (Open).
func (b Backend) Open(tb testing.TB) *store.Store {
	tb.Helper()
	return Open(tb, b.DB(tb))
}

// Backends runs fn once over each backend, SQLite and PostgreSQL, as
// parallel subtests of t named after them. The postgres subtest skips,
// saying why, unless pgtest.EnvURL is set.
func Backends(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range []Backend{SQLite, Postgres} {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			if b.Name == Postgres.Name && os.Getenv(pgtest.EnvURL) == "" {
				t.Skipf("PostgreSQL: skipped, %s is not set (CI sets it: see .ci/run)", pgtest.EnvURL)
			}
			fn(t, b)
		})
	}
}

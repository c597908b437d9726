// Package pgtest gives each test a new, empty PostgreSQL database on the
// server that CARILLON_TEST_POSTGRES names (CI starts a throwaway one: see
// .ci/run). Without that variable the tests that need PostgreSQL skip,
// saying so; with it, a server that cannot be reached fails them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the environment variable naming the test server: a postgres://
// URL of a user that may create databases.
const EnvURL = "CARILLON_TEST_POSTGRES"

// URL returns the URL of a new database on the test server, dropped when
// the test ends (with the connections left to it). It skips the test when
// EnvURL is not set, and fails it when the server cannot be reached.
func URL(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		tb.Skipf("PostgreSQL: skipped, %s is not set (a postgres:// URL of a user that may create databases; .ci/run starts a server)", EnvURL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("PostgreSQL: %s is set but the server cannot be reached: %v", EnvURL, err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "carillon_test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("PostgreSQL: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("PostgreSQL: drop database %s: %v", name, err)
			return
		}
		defer func() { _ = conn.Close(context.Background()) }()
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("PostgreSQL: drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("PostgreSQL: %s: %v", EnvURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Backend is a database the store runs over, for tests run over each.
type Backend struct {
	// Name is "sqlite" or "postgres": the subtest's name.
	Name string
	// DB returns a new, empty database for one test: a SQLite file in
	// t.TempDir(), or a PostgreSQL URL from URL.
	DB func(tb testing.TB) string
}

// Backends are SQLite and PostgreSQL.
var Backends = []Backend{
	{Name: "sqlite", DB: func(tb testing.TB) string {
		tb.Helper()
		return filepath.Join(tb.TempDir(), "carillon.db")
	}},
	{Name: "postgres", DB: URL},
}

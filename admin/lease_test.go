package admin_test

import (
	"context"
	"database/sql"
	"net/http"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
)

// TestLeaseDuration: over PostgreSQL, an admin's Config.LeaseDuration
// (--lease-duration) is how long its lease holds on the database's clock
// after each renewal.
func TestLeaseDuration(t *testing.T) {
	t.Parallel()
	db := pgtest.URL(t)
	startAdminWith(t, admin.Config{DBPath: db, LeaseDuration: time.Hour}, http.DefaultClient)
	d, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// The lease loop renews at once as it starts: wait for the row to
	// show it rather than for a time.
	var left int64
	for range 500 {
		err = d.QueryRowContext(context.Background(), `SELECT lease_until - (extract(epoch from clock_timestamp()) * 1000)::bigint
			FROM admins WHERE adopted_by = '' ORDER BY lease_until DESC LIMIT 1`).Scan(&left)
		if err != nil {
			t.Fatal(err)
		}
		if left > int64(time.Minute/time.Millisecond) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if left < int64(59*time.Minute/time.Millisecond) {
		t.Errorf("the admin's lease holds %d ms more on the database's clock, want about an hour", left)
	}
}

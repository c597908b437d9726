package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// migrateTo applies the embedded migrations up to version to a new
// database at path, as a release that had only those did.
func migrateTo(t *testing.T, path string, version int) *sql.DB {
	t.Helper()
	db, err := openDB(path, "", "immediate", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	applyMigrations(t, db, "migrations", version)
	return db
}

// applyMigrations applies the embedded migrations of dir up to version
// to db, a new database, recording each as Store.migrate does.
func applyMigrations(t *testing.T, db *sql.DB, dir string, version int) {
	t.Helper()
	names, _ := fs.Glob(migrations, dir+"/*.sql")
	sort.Strings(names)
	if _, err := db.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		v, _ := strconv.Atoi(strings.SplitN(filepath.Base(name), "_", 2)[0])
		if v > version {
			break
		}
		body, _ := migrations.ReadFile(name)
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := db.Exec(`INSERT INTO schema_migrations (version) VALUES (` + strconv.Itoa(v) + `)`); err != nil {
			t.Fatal(err)
		}
	}
}

// dump returns every row of table, each as text, in id order. Columns
// that later migrations added (with their defaults) are left out.
func dump(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	sel := "*"
	switch table {
	case "groups":
		sel = "id, app_name, title, address_mode, addresses, created_at, updated_at" // 0009 added executor_protocol, allow_scripts
	case "jobs":
		// 0016 to 0019 and 0021 added the columns after updated_at; 0023
		// moved child_job_ids to job_children (TestChildrenMigrated).
		sel = "id, " + jobWriteColumns[:strings.Index(jobWriteColumns, ", param_template")]
	case "users":
		sel = principalColumns // 0020 added oidc_issuer, oidc_subject
	case "runs":
		sel = strings.TrimSuffix(runColumns, `, workflow_run_id, workflow_node,
	outputs, inputs, rendered_param, slot, started_at`) // 0012, 0013, 0017 and 0018 added those
	}
	rows, err := db.Query(`SELECT ` + sel + ` FROM ` + table + ` ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals...))
	}
	return out
}

// TestIDsNeverReused migrates a database of the release before (migration
// 0005) whose newest job, group, user and API token were deleted, with runs
// and audit entries still naming them: every row survives as it was, and
// new rows never take an id given out before. On a new database, deleting
// the newest row and creating another gives a new id too.
func TestIDsNeverReused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "carillon.db")
	old := migrateTo(t, path, 5)
	for _, q := range []string{
		`INSERT INTO groups (id, app_name, title, address_mode, created_at, updated_at) VALUES (1, 'a', 'A', 1, 1, 1), (2, 'b', 'B', 1, 1, 1)`,
		`INSERT INTO jobs (id, group_id, description, schedule_type, misfire_strategy, route_strategy, block_strategy, child_job_ids, created_at, updated_at)
			VALUES (1, 1, 'one', 0, 1, 1, 1, '2', 1, 1), (2, 2, 'two', 0, 1, 1, 1, '', 1, 1)`,
		`INSERT INTO users (id, username, password_hash, role, created_at, updated_at) VALUES (1, 'admin', 'h', 1, 1, 1), (2, 'mem', 'h', 2, 1, 1)`,
		`INSERT INTO user_groups (user_id, group_id) VALUES (2, 1)`,
		`INSERT INTO sessions (id, user_id, token_hash, created_at, expires_at) VALUES (1, 2, 's', 1, 9)`,
		`INSERT INTO api_tokens (id, user_id, name, token_hash, created_at) VALUES (1, 1, 't1', 'x1', 1), (2, 2, 't2', 'x2', 1)`,
		// Deleted before the upgrade: group 3, job 3 (its runs stay), user
		// 3 (in the audit log), API token 3.
		`INSERT INTO runs (job_id, group_id, trigger_type, scheduled_at, status, due_at) VALUES (3, 3, 1, 1, 2, 1), (1, 1, 1, 2, 2, 2)`,
		`INSERT INTO audit_log (at, user_id, username, action, target, detail, peer) VALUES (1, 3, 'gone', 'x', 'y', '', '')`,
	} {
		if _, err := old.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tables := []string{"groups", "jobs", "users", "user_groups", "sessions", "api_tokens", "runs", "audit_log"}
	before := map[string][]string{}
	for _, tb := range tables {
		before[tb] = dump(t, old, tb)
	}
	old.Close()

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tb := range tables {
		if diff := cmp.Diff(before[tb], dump(t, s.r, tb)); diff != "" {
			t.Errorf("%s changed in the migration (-before +after):\n%s", tb, diff)
		}
	}
	var fkBad int
	if err := s.r.QueryRow(`SELECT count(*) FROM pragma_foreign_key_check`).Scan(&fkBad); err != nil || fkBad != 0 {
		t.Errorf("foreign key check after the migration: %d rows, %v", fkBad, err)
	}
	if one, err := s.Jobs.Get(ctx, 1); err != nil || !slices.Equal(one.ChildJobIDs, []int64{2}) {
		t.Errorf("job 1 after the migration: children %v, %v; want [2]", one.ChildJobIDs, err)
	}
	now := time.Now()
	g, err := s.Groups.Create(ctx, Group{AppName: "c", Title: "C", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, now)
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Jobs.Create(ctx, Job{GroupID: 1, Description: "new", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
		MisfireStrategy: 1, RouteStrategy: 1, BlockStrategy: 1}, now)
	if err != nil {
		t.Fatal(err)
	}
	u, err := s.Users.Create(ctx, User{Username: "newer", PasswordHash: "h", Role: 3}, now)
	if err != nil {
		t.Fatal(err)
	}
	if g.ID != 4 || j.ID != 4 || u.ID != 4 {
		t.Errorf("new ids: group %d, job %d, user %d; want 4 each, past the ids runs and the audit log still name", g.ID, j.ID, u.ID)
	}

	// Delete the newest and create again: a new id.
	if err := s.Jobs.Delete(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	j2, err := s.Jobs.Create(ctx, Job{GroupID: 1, Description: "newer", ScheduleType: carillonv1.ScheduleType_SCHEDULE_TYPE_NONE,
		MisfireStrategy: 1, RouteStrategy: 1, BlockStrategy: 1}, now)
	if err != nil {
		t.Fatal(err)
	}
	if j2.ID <= j.ID {
		t.Errorf("a job created after deleting job %d got id %d", j.ID, j2.ID)
	}
	if err := s.Groups.Delete(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	g2, err := s.Groups.Create(ctx, Group{AppName: "d", Title: "D", AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, now)
	if err != nil {
		t.Fatal(err)
	}
	if g2.ID <= g.ID {
		t.Errorf("a group created after deleting group %d got id %d", g.ID, g2.ID)
	}
	if err := s.Users.Delete(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	u2, err := s.Users.Create(ctx, User{Username: "newest", PasswordHash: "h", Role: 3}, now)
	if err != nil {
		t.Fatal(err)
	}
	if u2.ID <= u.ID {
		t.Errorf("a user created after deleting user %d got id %d", u.ID, u2.ID)
	}
	t1, err := s.Auth.CreateToken(ctx, APIToken{UserID: 1, Name: "n1", TokenHash: "h1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Auth.DeleteToken(ctx, t1.ID); err != nil {
		t.Fatal(err)
	}
	t2, err := s.Auth.CreateToken(ctx, APIToken{UserID: 1, Name: "n2", TokenHash: "h2"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if t2.ID <= t1.ID {
		t.Errorf("an API token created after deleting token %d got id %d", t1.ID, t2.ID)
	}
}

package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestAuditWithItsChange: a change and its audit entry are written in one
// transaction: when the entry cannot be written, the change is not made
// either, and the call fails; when it can, the entry names what the call
// created.
func TestAuditWithItsChange(t *testing.T) {
	t.Parallel()
	// SQLite only: it plants a trigger in the SQLite file that refuses the
	// audit log's writes.
	be := dbtest.SQLite
	ctx := context.Background()
	b := setup(t, be, "")
	c := clientsOf(b.url, b.admin)
	raw, err := sql.Open("sqlite", "file:"+b.db)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'audit refused'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "unaudited"}}); err == nil {
		t.Error("CreateGroup succeeded although its audit entry could not be written")
	}
	groups, err := c.group.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.AppName == "unaudited" {
			t.Errorf("group %d was created without its audit entry", g.Id)
		}
	}

	if _, err := raw.Exec(`DROP TRIGGER refuse_audit`); err != nil {
		t.Fatal(err)
	}
	g, err := c.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "audited"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.user.ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Entries) == 0 || res.Entries[0].Action != "GroupService.CreateGroup" || res.Entries[0].Target != fmt.Sprintf("group %d", g.Group.Id) {
		t.Errorf("newest audit entry %v, want GroupService.CreateGroup of group %d", res.Entries[:min(1, len(res.Entries))], g.Group.Id)
	}
}

// TestAuditLeavesOutTriggerParams: a TriggerJob's param override, which
// may carry secrets, is not kept in the audit log; its length is.
func TestAuditLeavesOutTriggerParams(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		f := newFixture(t, be)
		secret := "db-password=hunter2"
		if _, err := f.as["admin"].job.TriggerJob(ctx, &carillonv1.TriggerJobRequest{JobId: f.jobA, Param: &secret}); err != nil {
			t.Fatal(err)
		}
		res, err := f.as["admin"].user.ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) == 0 || res.Entries[0].Action != "JobService.TriggerJob" {
			t.Fatalf("newest audit entry %v, want the TriggerJob", res.Entries[:min(1, len(res.Entries))])
		}
		if d := res.Entries[0].Detail; strings.Contains(d, "hunter2") || !strings.Contains(d, "19 bytes, not recorded") {
			t.Errorf("audit detail %q: want the param's length, not the param", d)
		}
	})
}

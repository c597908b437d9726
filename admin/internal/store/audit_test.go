package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestAuditComplete: a pending audit entry is written whole with the
// call's change and completed after it (Complete), or appended by Complete
// when the call wrote nothing; Log reads every column back, over both
// databases.
func TestAuditComplete(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _, root := openUsers(t, be.DB(t))

			// Written with the change, then completed with what the
			// response tells.
			created := store.AuditEntry{At: t0, UserID: root.ID, Username: "root", Action: "UserService.CreateUser",
				Detail: `{"username":"ada"}`, Peer: "192.0.2.1:4000"}
			actx, p := store.WithAudit(ctx, created)
			ada, err := s.Users.Create(actx, store.User{Username: "ada", PasswordHash: "h", Role: auth.RoleViewer}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Written() {
				t.Fatal("the entry was not written with the change")
			}
			if err := s.Audit.Complete(actx, p, func(e *store.AuditEntry) { e.Target = "user ada" }); err != nil {
				t.Fatal(err)
			}
			created.Target = "user ada"

			// A call that wrote nothing: Complete appends its entry, with
			// the user the response names.
			login := store.AuditEntry{At: t0.Add(time.Second), Action: "AuthService.Login", Detail: "{}", Peer: "192.0.2.2:4001"}
			lctx, p := store.WithAudit(ctx, login)
			if err := s.Audit.Complete(lctx, p, func(e *store.AuditEntry) { e.UserID, e.Username, e.Target = ada.ID, "ada", "session" }); err != nil {
				t.Fatal(err)
			}
			login.UserID, login.Username, login.Target = ada.ID, "ada", "session"

			es, err := s.Audit.Log(ctx, store.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 2 {
				t.Fatalf("audit log: %+v, want 2 entries", es)
			}
			login.ID, created.ID = es[0].ID, es[1].ID
			if diff := cmp.Diff([]store.AuditEntry{login, created}, es); diff != "" || login.ID <= created.ID {
				t.Errorf("audit log, newest first (-want +got):\n%s", diff)
			}
		})
	}
}

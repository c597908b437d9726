package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// openUsers opens a store on a new file with two groups and an ADMIN.
func openUsers(t *testing.T, db string) (*store.Store, []int64, store.User) {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var groups []int64
	for _, app := range []string{"a", "b"} {
		g, err := s.Groups.Create(ctx, store.Group{AppName: app, Title: app, AddressMode: carillonv1.AddressMode_ADDRESS_MODE_AUTO}, t0)
		if err != nil {
			t.Fatal(err)
		}
		groups = append(groups, g.ID)
	}
	admin, err := s.Users.Create(ctx, store.User{Username: "root", PasswordHash: "h", Role: auth.RoleAdmin}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s, groups, admin
}

func TestUsers(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, groups, admin := openUsers(t, newDB(t))
			m, err := s.Users.Create(ctx, store.User{Username: "Ada", PasswordHash: "h", Role: auth.RoleMember, Groups: []int64{groups[1], groups[0], groups[1]}}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int64{groups[0], groups[1]}, m.Groups); diff != "" {
				t.Errorf("groups sorted and unique (-want +got):\n%s", diff)
			}
			if _, err := s.Users.Create(ctx, store.User{Username: "ADA", PasswordHash: "h", Role: auth.RoleViewer}, t0); !errors.Is(err, store.ErrAlreadyExists) {
				t.Errorf("username taken ignoring case: %v, want ErrAlreadyExists", err)
			}
			if _, err := s.Users.Create(ctx, store.User{Username: "bob", PasswordHash: "h", Role: auth.RoleMember, Groups: []int64{999}}, t0); !errors.Is(err, store.ErrGroupNotFound) {
				t.Errorf("grant of a missing group: %v, want ErrGroupNotFound", err)
			}
			if _, err := s.Users.ByName(ctx, "bob"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a refused create stored the user: %v", err)
			}
			got, err := s.Users.ByName(ctx, "ada")
			if err != nil || got.ID != m.ID || len(got.Groups) != 2 {
				t.Errorf("UserByName(ada) = %+v, %v", got, err)
			}

			// The last enabled ADMIN stays one.
			for name, u := range map[string]store.User{
				"Demote":  {ID: admin.ID, Role: auth.RoleViewer},
				"Disable": {ID: admin.ID, Role: auth.RoleAdmin, Disabled: true},
			} {
				if _, err := s.Users.Update(ctx, u, t0); !errors.Is(err, store.ErrLastAdmin) {
					t.Errorf("%s the last admin: %v, want ErrLastAdmin", name, err)
				}
			}
			if err := s.Users.Delete(ctx, admin.ID); !errors.Is(err, store.ErrLastAdmin) {
				t.Errorf("delete the last admin: %v, want ErrLastAdmin", err)
			}
			if _, err := s.Users.Update(ctx, store.User{ID: m.ID, Role: auth.RoleAdmin}, t0); err != nil {
				t.Fatal(err)
			}
			if err := s.Users.Delete(ctx, admin.ID); err != nil {
				t.Errorf("delete an admin while another remains: %v", err)
			}
			if n, err := s.Users.Count(ctx); err != nil || n != 1 {
				t.Errorf("CountUsers = %d, %v; want 1", n, err)
			}
		})
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, groups, admin := openUsers(t, newDB(t))
			m, err := s.Users.Create(ctx, store.User{Username: "mem", PasswordHash: "h", Role: auth.RoleMember, Groups: groups[:1]}, t0)
			if err != nil {
				t.Fatal(err)
			}
			_, sh := auth.NewSessionToken()
			sid, err := s.Auth.CreateSession(ctx, m.ID, sh, t0, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Auth.Principal(ctx, auth.CredentialSession, sh, t0.Add(59*time.Minute))
			want := auth.Principal{UserID: m.ID, Username: "mem", Role: auth.RoleMember, Groups: groups[:1], Credential: auth.CredentialSession, CredentialID: sid}
			if err != nil || !cmp.Equal(p, want) {
				t.Errorf("session principal = %+v, %v; want %+v", p, err, want)
			}
			if _, err := s.Auth.Principal(ctx, auth.CredentialSession, sh, t0.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("expired session: %v, want ErrNotFound", err)
			}
			if _, err := s.Auth.Principal(ctx, auth.CredentialAPIToken, sh, t0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("session hash looked up as an API token: %v, want ErrNotFound", err)
			}

			_, th := auth.NewAPIToken()
			tok, err := s.Auth.CreateToken(ctx, store.APIToken{UserID: m.ID, Name: "ci", TokenHash: th}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Auth.CreateToken(ctx, store.APIToken{UserID: m.ID, Name: "ci", TokenHash: "other"}, t0); !errors.Is(err, store.ErrAlreadyExists) {
				t.Errorf("duplicate token name: %v", err)
			}
			if _, err := s.Auth.Principal(ctx, auth.CredentialAPIToken, th, t0.Add(time.Hour)); err != nil {
				t.Errorf("API token without expiry: %v", err)
			}
			if got, err := s.Auth.Token(ctx, tok.ID); err != nil || !got.LastUsedAt.Equal(t0.Add(time.Hour)) || got.Username != "mem" {
				t.Errorf("after use: %+v, %v", got, err)
			}

			// Disabling the user stops every credential; a new password ends sessions.
			if _, err := s.Users.Update(ctx, store.User{ID: m.ID, Role: auth.RoleMember, Groups: groups[:1], Disabled: true}, t0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Auth.Principal(ctx, auth.CredentialAPIToken, th, t0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("token of a disabled user: %v, want ErrNotFound", err)
			}
			_, ah := auth.NewSessionToken()
			keep, err := s.Auth.CreateSession(ctx, admin.ID, ah, t0, t0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			_, ah2 := auth.NewSessionToken()
			if _, err := s.Auth.CreateSession(ctx, admin.ID, ah2, t0, t0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := s.Users.SetPassword(ctx, admin.ID, "h2", keep, t0); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Auth.Principal(ctx, auth.CredentialSession, ah, t0); err != nil {
				t.Errorf("kept session: %v", err)
			}
			if _, err := s.Auth.Principal(ctx, auth.CredentialSession, ah2, t0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("other session after a password change: %v, want ErrNotFound", err)
			}
			if err := s.Auth.DeleteSession(ctx, keep); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Auth.Principal(ctx, auth.CredentialSession, ah, t0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("deleted session: %v, want ErrNotFound", err)
			}
			// Deleting a user deletes their tokens.
			if err := s.Users.Delete(ctx, m.ID); err != nil {
				t.Fatal(err)
			}
			if ts, err := s.Auth.Tokens(ctx, 0); err != nil || len(ts) != 0 {
				t.Errorf("tokens after the user was deleted: %v, %v", ts, err)
			}
		})
	}
}

func TestAuditAndSettings(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			newDB := be.DB

			ctx := context.Background()
			s, _, _ := openUsers(t, newDB(t))
			for i, action := range []string{"A.One", "A.Two", "A.One"} {
				if err := s.Audit.Add(ctx, store.AuditEntry{At: t0.Add(time.Duration(i) * time.Second), Username: "root", Action: action}); err != nil {
					t.Fatal(err)
				}
			}
			es, err := s.Audit.Log(ctx, store.AuditFilter{Action: "A.One"})
			if err != nil || len(es) != 2 || es[0].ID < es[1].ID || !es[0].At.Equal(t0.Add(2*time.Second)) {
				t.Errorf("A.One entries newest first: %+v, %v", es, err)
			}
			if es, err := s.Audit.Log(ctx, store.AuditFilter{BeforeID: es[0].ID, Limit: 1}); err != nil || len(es) != 1 || es[0].Action != "A.Two" {
				t.Errorf("page before the newest: %+v, %v", es, err)
			}

			if _, err := s.Settings.Get(ctx, "k"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("unset setting: %v", err)
			}
			v, stored, err := s.Settings.Init(ctx, "k", "first", t0)
			if err != nil || v != "first" || !stored {
				t.Errorf("InitSetting = %q, %v, %v", v, stored, err)
			}
			v, stored, err = s.Settings.Init(ctx, "k", "second", t0)
			if err != nil || v != "first" || stored {
				t.Errorf("InitSetting again = %q, %v, %v; want the first value kept", v, stored, err)
			}
		})
	}
}

// TestUserRows: a user is read back whole (Get, List) after each write of
// its row: created, signed in, updated with a new password, disabled and
// reset by ResetAdmin, over both databases. Each column is compared, so a
// query that swaps or drops one fails here.
func TestUserRows(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, groups, root := openUsers(t, be.DB(t))
			get := func(id int64) store.User {
				t.Helper()
				u, err := s.Users.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				return u
			}
			t1, t2, t3 := t0.Add(time.Minute), t0.Add(2*time.Minute), t0.Add(3*time.Minute)

			ada, err := s.Users.Create(ctx, store.User{Username: "ada", PasswordHash: "h1", Role: auth.RoleMember, Groups: []int64{groups[1], groups[0]}}, t0)
			if err != nil {
				t.Fatal(err)
			}
			want := store.User{ID: ada.ID, Username: "ada", PasswordHash: "h1", Role: auth.RoleMember, Groups: []int64{groups[0], groups[1]},
				CreatedAt: t0, UpdatedAt: t0}
			if diff := cmp.Diff(want, get(ada.ID)); diff != "" {
				t.Errorf("created user (-want +got):\n%s", diff)
			}
			bob, err := s.Users.Create(ctx, store.User{Username: "bob", PasswordHash: "hb", Role: auth.RoleViewer, Disabled: true}, t0)
			if err != nil {
				t.Fatal(err)
			}
			if got := get(bob.ID); !got.Disabled || got.Role != auth.RoleViewer {
				t.Errorf("created disabled VIEWER: %+v", got)
			}

			if _, err := s.Auth.CreateSession(ctx, ada.ID, "s1", t1, t1.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			want.LastLoginAt = t1
			if diff := cmp.Diff(want, get(ada.ID)); diff != "" {
				t.Errorf("user after a login (-want +got):\n%s", diff)
			}

			// A new password by Update is stored with the update's time,
			// and ends the user's sessions and API tokens.
			if _, err := s.Auth.CreateToken(ctx, store.APIToken{UserID: ada.ID, Name: "ci", TokenHash: "t1"}, t1); err != nil {
				t.Fatal(err)
			}
			got, err := s.Users.Update(ctx, store.User{ID: ada.ID, PasswordHash: "h2", Role: auth.RoleViewer}, t2)
			if err != nil {
				t.Fatal(err)
			}
			want.PasswordHash, want.Role, want.Groups, want.UpdatedAt = "h2", auth.RoleViewer, nil, t2
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("updated user (-want +got):\n%s", diff)
			}
			if _, err := s.Auth.Principal(ctx, auth.CredentialSession, "s1", t2); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("session after a new password: %v, want ErrNotFound", err)
			}
			if ts, err := s.Auth.Tokens(ctx, ada.ID); err != nil || len(ts) != 0 {
				t.Errorf("API tokens after a new password: %+v, %v; want none", ts, err)
			}

			// Disabling a user revokes its API tokens (the user stays).
			if _, err := s.Auth.CreateToken(ctx, store.APIToken{UserID: ada.ID, Name: "ci", TokenHash: "t2"}, t2); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Users.Update(ctx, store.User{ID: ada.ID, Role: auth.RoleViewer, Disabled: true}, t2); err != nil {
				t.Fatal(err)
			}
			if ts, err := s.Auth.Tokens(ctx, ada.ID); err != nil || len(ts) != 0 {
				t.Errorf("API tokens of a disabled user: %+v, %v; want none", ts, err)
			}
			want.Disabled = true
			if diff := cmp.Diff(want, get(ada.ID)); diff != "" {
				t.Errorf("disabled user (-want +got):\n%s", diff)
			}

			// ResetAdmin finds the user ignoring case and makes it an
			// enabled ADMIN with the new password and no grants; it creates
			// a user it does not find.
			if _, err := s.Users.Update(ctx, store.User{ID: ada.ID, Role: auth.RoleMember, Groups: groups[:1], Disabled: true}, t2); err != nil {
				t.Fatal(err)
			}
			got, err = s.Users.ResetAdmin(ctx, "ADA", "h3", t3)
			if err != nil {
				t.Fatal(err)
			}
			want.PasswordHash, want.Role, want.Disabled, want.UpdatedAt = "h3", auth.RoleAdmin, false, t3
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("reset user (-want +got):\n%s", diff)
			}
			carol, err := s.Users.ResetAdmin(ctx, "carol", "hc", t3)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(store.User{ID: carol.ID, Username: "carol", PasswordHash: "hc", Role: auth.RoleAdmin, CreatedAt: t3, UpdatedAt: t3}, carol); diff != "" {
				t.Errorf("user created by ResetAdmin (-want +got):\n%s", diff)
			}

			// List is every user, whole, by username.
			var wantAll []store.User
			for _, id := range []int64{ada.ID, bob.ID, carol.ID, root.ID} {
				wantAll = append(wantAll, get(id))
			}
			all, err := s.Users.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantAll, all); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
			if n, err := s.Users.Count(ctx); err != nil || n != 4 {
				t.Errorf("Count = %d, %v; want 4", n, err)
			}
		})
	}
}

package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/pgtest"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// TestSignInOIDC checks single sign-on's user handling: a new identity
// creates a user without a password, the same identity finds it again
// under another name, an identity links to an existing user by name, the
// role and grants follow each sign-in, and every refusal writes nothing.
func TestSignInOIDC(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, groups, root := openUsers(t, be.DB(t))
			n := 0
			signIn := func(in store.OIDCSignIn) (store.User, bool, error) {
				n++
				in.Issuer = "https://idp.example.com"
				in.SessionHash = auth.HashToken("session-" + string(rune('a'+n)))
				in.Expires = t0.Add(time.Hour)
				return s.Auth.SignInOIDC(ctx, in, t0.Add(time.Duration(n)*time.Minute))
			}

			u, created, err := signIn(store.OIDCSignIn{Subject: "s-ada", Usernames: []string{"ada", "ada@example.com"},
				Role: auth.RoleMember, Groups: []int64{groups[1]}})
			if err != nil || !created {
				t.Fatalf("first sign-in: %v (created %v)", err, created)
			}
			if u.Username != "ada" || u.Role != auth.RoleMember || len(u.Groups) != 1 || u.Groups[0] != groups[1] || u.PasswordHash != "" ||
				u.OIDCIssuer != "https://idp.example.com" || u.OIDCSubject != "s-ada" {
				t.Errorf("created user: %+v", u)
			}
			if u.LastLoginAt.IsZero() {
				t.Errorf("last_login_at not set")
			}
			p, err := s.Auth.Principal(ctx, auth.CredentialSession, auth.HashToken("session-b"), t0)
			if err != nil || p.UserID != u.ID {
				t.Errorf("the sign-in's session: %+v, %v", p, err)
			}

			// The same subject under another preferred name is the same user;
			// its role follows the groups.
			again, created, err := signIn(store.OIDCSignIn{Subject: "s-ada", Usernames: []string{"ada.l"}, Role: auth.RoleViewer})
			if err != nil || created || again.ID != u.ID || again.Role != auth.RoleViewer || len(again.Groups) != 0 {
				t.Errorf("second sign-in: %+v created %v, %v", again, created, err)
			}
			if !again.UpdatedAt.After(u.UpdatedAt) {
				t.Errorf("updated_at did not move with the role")
			}
			same, _, err := signIn(store.OIDCSignIn{Subject: "s-ada", Usernames: []string{"ada"}, Role: auth.RoleViewer})
			if err != nil || !same.UpdatedAt.Equal(again.UpdatedAt) {
				t.Errorf("a sign-in that changes nothing moved updated_at: %v -> %v (%v)", again.UpdatedAt, same.UpdatedAt, err)
			}

			// A local user is linked by name, ignoring case, keeping its password.
			linked, created, err := signIn(store.OIDCSignIn{Subject: "s-root", Usernames: []string{"nobody", "ROOT"}, Role: auth.RoleAdmin})
			if err != nil || created || linked.ID != root.ID || linked.PasswordHash != "h" || linked.OIDCSubject != "s-root" {
				t.Errorf("linking root: %+v created %v, %v", linked, created, err)
			}

			before, err := s.Users.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			refusals := []struct {
				name string
				in   store.OIDCSignIn
				want error
			}{
				{"a name linked to another identity", store.OIDCSignIn{Subject: "s-other", Usernames: []string{"ada"}, Role: auth.RoleViewer}, store.ErrOIDCLinkedElsewhere},
				{"the last ADMIN demoted", store.OIDCSignIn{Subject: "s-root", Usernames: []string{"root"}, Role: auth.RoleViewer}, store.ErrLastAdmin},
				{"a missing group", store.OIDCSignIn{Subject: "s-new", Usernames: []string{"newbie"}, Role: auth.RoleMember, Groups: []int64{999}}, store.ErrGroupNotFound},
			}
			for _, r := range refusals {
				if _, _, err := signIn(r.in); !errors.Is(err, r.want) {
					t.Errorf("%s: %v, want %v", r.name, err, r.want)
				}
			}
			if _, err := s.Users.Update(ctx, store.User{ID: u.ID, Role: auth.RoleViewer, Disabled: true}, t0); err != nil {
				t.Fatal(err)
			}
			before[0].Disabled = true // ada, first by name
			if _, _, err := signIn(store.OIDCSignIn{Subject: "s-ada", Usernames: []string{"ada"}, Role: auth.RoleAdmin}); !errors.Is(err, store.ErrUserDisabled) {
				t.Errorf("a disabled user: %v, want ErrUserDisabled", err)
			}
			after, err := s.Users.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) {
				t.Fatalf("users after the refusals: %d, want %d", len(after), len(before))
			}
			for i := range after {
				a, b := after[i], before[i]
				if a.ID != b.ID || a.Role != b.Role || a.Disabled != b.Disabled || !a.LastLoginAt.Equal(b.LastLoginAt) || len(a.Groups) != len(b.Groups) {
					t.Errorf("a refused sign-in changed %q: %+v -> %+v", b.Username, b, a)
				}
			}
		})
	}
}

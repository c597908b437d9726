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
)

// TestAPITokens: tokens are stored and read back whole, listed by user
// (every user's for 0) in ID order, unique by name per user, and deleted
// once. Their queries are sqlc's (queries/apitoken.sql), one text over
// both databases.
func TestAPITokens(t *testing.T) {
	t.Parallel()
	for _, be := range pgtest.Backends {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, _, root := openUsers(t, be.DB(t))
			ada, err := s.Users.Create(ctx, store.User{Username: "ada", PasswordHash: "h", Role: auth.RoleViewer}, t0)
			if err != nil {
				t.Fatal(err)
			}
			expires := t0.Add(24 * time.Hour)
			var made []store.APIToken
			for _, tok := range []store.APIToken{
				{UserID: root.ID, Name: "ci", TokenHash: "h1", ExpiresAt: expires},
				{UserID: ada.ID, Name: "ci", TokenHash: "h2"},
				{UserID: root.ID, Name: "deploy", TokenHash: "h3"},
			} {
				got, err := s.Auth.CreateToken(ctx, tok, t0)
				if err != nil {
					t.Fatal(err)
				}
				made = append(made, got)
			}
			want := store.APIToken{ID: made[0].ID, UserID: root.ID, Username: "root", Name: "ci", TokenHash: "h1", CreatedAt: t0, ExpiresAt: expires}
			if diff := cmp.Diff(want, made[0]); diff != "" {
				t.Errorf("the token as created (-want +got):\n%s", diff)
			}
			if _, err := s.Auth.CreateToken(ctx, store.APIToken{UserID: ada.ID, Name: "ci", TokenHash: "h4"}, t0); !errors.Is(err, store.ErrAlreadyExists) {
				t.Errorf("a second token named ci of one user: %v, want ErrAlreadyExists", err)
			}
			ids := func(ts []store.APIToken) []int64 {
				out := []int64{}
				for _, tok := range ts {
					out = append(out, tok.ID)
				}
				return out
			}
			for user, want := range map[int64][]int64{0: {made[0].ID, made[1].ID, made[2].ID}, root.ID: {made[0].ID, made[2].ID}, ada.ID: {made[1].ID}} {
				got, err := s.Auth.Tokens(ctx, user)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, ids(got)); diff != "" {
					t.Errorf("tokens of user %d (-want +got):\n%s", user, diff)
				}
			}
			if err := s.Auth.DeleteToken(ctx, made[1].ID); err != nil {
				t.Fatal(err)
			}
			if err := s.Auth.DeleteToken(ctx, made[1].ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("deleting it again: %v, want ErrNotFound", err)
			}
			if _, err := s.Auth.Token(ctx, made[1].ID); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("reading a deleted token: %v, want ErrNotFound", err)
			}
		})
	}
}

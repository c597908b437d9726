package server_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/internal/testkit"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// TestUnclaimedApps registers executors under app names no group has: the
// admin logs each app name once, ListGroups names the live ones to an
// ADMIN and none to a MEMBER, and an app name leaves the list once a group
// has it or its executors stop beating.
func TestUnclaimedApps(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		var logs testkit.LogBuffer
		b := setupLogged(t, be, "", slog.New(slog.NewTextHandler(&logs, nil)))
		register := func(app, addr string) {
			t.Helper()
			if _, err := b.registry.Register(ctx, &carillonv1.RegisterRequest{AppName: app, Address: addr}); err != nil {
				t.Fatal(err)
			}
		}
		unclaimed := func(g interface {
			ListGroups(context.Context, *carillonv1.ListGroupsRequest) (*carillonv1.ListGroupsResponse, error)
		}) []string {
			t.Helper()
			res, err := g.ListGroups(ctx, &carillonv1.ListGroupsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			return res.UnclaimedAppNames
		}
		if _, err := b.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "claimed"}}); err != nil {
			t.Fatal(err)
		}
		register("claimed", "http://10.0.0.1:9999")
		register("orphan", "http://10.0.0.2:9999")
		register("orphan", "http://10.0.0.3:9999")
		register("orphan", "http://10.0.0.2:9999") // a heartbeat
		register("stray", "http://10.0.0.4:9999")

		if got, want := unclaimed(b.group), []string{"orphan", "stray"}; !cmp.Equal(got, want) {
			t.Errorf("unclaimed app names: %q, want %q", got, want)
		}
		if n := strings.Count(logs.String(), "app=orphan"); n != 1 {
			t.Errorf("the admin logged app orphan %d times, want once:\n%s", n, logs.String())
		}
		if strings.Contains(logs.String(), "app=claimed") {
			t.Errorf("the admin logged a claimed app:\n%s", logs.String())
		}
		member := clientsOf(b.url, addUser(t, b.store, "mia", auth.RoleMember))
		if got := unclaimed(member.group); len(got) != 0 {
			t.Errorf("a MEMBER sees unclaimed app names %q, want none", got)
		}

		if _, err := b.group.CreateGroup(ctx, &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "orphan"}}); err != nil {
			t.Fatal(err)
		}
		if got, want := unclaimed(b.group), []string{"stray"}; !cmp.Equal(got, want) {
			t.Errorf("after a group for orphan: %q, want %q", got, want)
		}
		b.clock.Add(2 * time.Minute) // past the 90 s an executor stays live
		if got := unclaimed(b.group); len(got) != 0 {
			t.Errorf("2 minutes without a beat: %q, want none", got)
		}
	})
}

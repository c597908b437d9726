package admin_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"golang.org/x/crypto/bcrypt"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/client"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestResetAdminPassword checks the way back in on the host: refused while
// an admin serves the file; once it is stopped, the ADMIN gets the new
// password (and is enabled again), its old sessions end, and the audit log
// says so.
func TestResetAdminPassword(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := startAdmin(t)
	old, _ := credentials.Load(a.URL)
	users := carillonv1connect.NewUserServiceClient(http.DefaultClient, a.URL, client.WithToken(old.(string)))
	if _, err := users.CreateUser(ctx, &carillonv1.CreateUserRequest{
		User: &carillonv1.User{Username: "second", Role: carillonv1.Role_ROLE_ADMIN}, Password: "second admin"}); err != nil {
		t.Fatal(err)
	}
	list, err := users.ListUsers(ctx, &carillonv1.ListUsersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range list.Users { // "admin" is disabled: nobody but "second" gets in
		if u.Username == admin.FirstAdminUsername {
			u.Disabled = true
			if _, err := users.UpdateUser(ctx, &carillonv1.UpdateUserRequest{User: u}); err != nil {
				t.Fatal(err)
			}
		}
	}

	_, err = admin.ResetAdminPassword(ctx, a.DB, "", "the new password", bcrypt.MinCost)
	if !errors.Is(err, admin.ErrConfig) || !strings.Contains(err.Error(), "stop the admin") {
		t.Errorf("reset while the admin serves the file: %v, want a refusal saying to stop it", err)
	}
	if err := a.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ResetAdminPassword(ctx, a.DB, "", "the new password", bcrypt.MinCost); err != nil {
		t.Fatal(err)
	}
	url := admintest.Start(t, admin.Config{DBPath: a.DB, Token: token}).URL
	login, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, url).Login(ctx,
		&carillonv1.LoginRequest{Username: admin.FirstAdminUsername, Password: "the new password"})
	if err != nil {
		t.Fatalf("login with the reset password: %v", err)
	}
	if login.User.Role != carillonv1.Role_ROLE_ADMIN || login.User.Disabled {
		t.Errorf("after the reset: %v, want an enabled ADMIN", login.User)
	}
	_, err = carillonv1connect.NewUserServiceClient(http.DefaultClient, url, client.WithToken(old.(string))).
		GetCurrentUser(ctx, &carillonv1.GetCurrentUserRequest{})
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Errorf("the session from before the reset: %v, want unauthenticated", err)
	}
	audit, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, url, client.WithToken(login.Token)).
		ListAuditLog(ctx, &carillonv1.ListAuditLogRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// Newest first: the login just made, then the reset.
	if len(audit.Entries) < 2 || audit.Entries[1].Action != "carillon reset-admin-password" || audit.Entries[1].Target != "user admin" {
		t.Errorf("audit log %v, want the reset before the last login", audit.Entries)
	}
}

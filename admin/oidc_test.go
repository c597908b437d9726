package admin_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/admintest"
	"github.com/carillonhq/carillon/admin/internal/server"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestOIDCEndToEnd signs in by single sign-on to a real admin (its
// configuration, its login cookie's key kept in the database, its
// console) through a real provider on loopback, with passwords disabled:
// a browser ends on the console's page with a session, an RPC works with
// it, the first ADMIN's password is refused, and the console is told so.
func TestOIDCEndToEnd(t *testing.T) {
	t.Parallel()
	a, idp := startSSOAdmin(t, admin.Config{LocalLoginDisabled: true})

	idp.QueueUser(&mockoidc.MockUser{Subject: "s-1", PreferredUsername: "lin", Email: "lin@example.com", EmailVerified: true, Groups: []string{"platform"}})
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	browser := &http.Client{Jar: jar}
	res, err := browser.Get(a.URL + server.OIDCLoginPath)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/" || !strings.Contains(string(page), "<div id=\"root\"") {
		t.Fatalf("sign-in ended on %d %s, want the console's page:\n%.300s", res.StatusCode, res.Request.URL, page)
	}
	// GetCurrentUser as the console's page calls it: JSON, its header, the cookie.
	req, err := http.NewRequest(http.MethodPost, a.URL+"/carillon.v1.UserService/GetCurrentUser", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(server.ConsoleHeader, "1")
	res, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	me, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(me), `"username":"lin"`) || !strings.Contains(string(me), `"ROLE_ADMIN"`) {
		t.Fatalf("GetCurrentUser with the SSO session: %d %s, want lin, an ADMIN", res.StatusCode, me)
	}

	_, err = carillonv1connect.NewUserServiceClient(http.DefaultClient, a.URL).Login(context.Background(),
		&carillonv1.LoginRequest{Username: admin.FirstAdminUsername, Password: adminPassword})
	if connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("a password with local login disabled: %v, want failed_precondition", err)
	}
	res, err = http.Get(a.URL + server.AuthMethodsPath)
	if err != nil {
		t.Fatal(err)
	}
	methods, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.TrimSpace(string(methods)) != `{"sso":true,"password":false}` {
		t.Errorf("%s: %s", server.AuthMethodsPath, methods)
	}
}

// startSSOAdmin starts an admin with cfg and single sign-on (cfg.OIDC's
// role options, if any) against a new mockoidc provider on loopback,
// whose group "platform" makes ADMINs.
func startSSOAdmin(t *testing.T, cfg admin.Config) (*testAdmin, *mockoidc.MockOIDC) {
	t.Helper()
	idp, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg.Token, cfg.AdminPassword, cfg.PublicURL = token, adminPassword, "http://"+addr
	o := admin.OIDC{}
	if cfg.OIDC != nil {
		o = *cfg.OIDC
	}
	o.Issuer, o.ClientID, o.ClientSecret = idp.Issuer(), idp.ClientID, idp.ClientSecret
	o.Scopes, o.AdminGroups = []string{"openid", "profile", "email", "groups"}, []string{"platform"}
	cfg.OIDC = &o
	return admintest.StartAt(t, cfg, addr), idp
}

package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	"github.com/carillonhq/carillon/admin/internal/server"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// sso is an admin with single sign-on against a mockoidc provider on
// loopback.
type sso struct {
	*bundle
	idp *mockoidc.MockOIDC
	// tamperNonce makes the provider put another nonce in its ID token.
	tamperNonce atomic.Bool
}

// setupSSO serves an admin whose single sign-on goes to a new mockoidc
// provider, with the ADMIN group "admins", the group "ops" granted the
// executor group "billing" (created), and mod's changes.
func setupSSO(t *testing.T, be dbtest.Backend, mod func(c *server.Config)) *sso {
	t.Helper()
	s := &sso{}
	idp, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	err = idp.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == mockoidc.AuthorizationEndpoint && s.tamperNonce.Load() {
				q := r.URL.Query()
				q.Set("nonce", "someone-elses-nonce")
				r.URL.RawQuery = q.Encode()
			}
			next.ServeHTTP(w, r)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := idp.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Shutdown() })
	s.idp = idp
	s.bundle = setupWith(t, be, "", func(c *server.Config, u string) {
		c.OIDC = &server.OIDC{Issuer: idp.Issuer(), ClientID: idp.ClientID, ClientSecret: idp.ClientSecret, PublicURL: u,
			Scopes: []string{"openid", "profile", "email", "groups"}, AdminGroups: []string{"admins"},
			MemberGroups: map[string][]string{"ops": {"billing", "missing"}}, Key: []byte(server.NewOIDCKey())}
		// The browser's cookie jar keeps cookies by the real clock.
		c.NowFunc = time.Now
		c.Console = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "the console") })
		if mod != nil {
			mod(c)
		}
	})
	if _, err := s.group.CreateGroup(context.Background(), &carillonv1.CreateGroupRequest{Group: &carillonv1.Group{AppName: "billing"}}); err != nil {
		t.Fatal(err)
	}
	return s
}

// browser is an HTTP client with its own cookie jar that follows
// redirects, as a browser does.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

// signIn queues user at the provider and runs the whole flow in c, from
// the login path to the last page; it returns that page's status, URL
// and body.
func (s *sso) signIn(t *testing.T, c *http.Client, user *mockoidc.MockUser) (int, *url.URL, string) {
	t.Helper()
	s.idp.QueueUser(user)
	res, err := c.Get(s.url + server.OIDCLoginPath)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Request.URL, string(body)
}

// sessionCookie returns the console's session cookie in c's jar, or "".
func (s *sso) sessionCookie(c *http.Client) string {
	u, _ := url.Parse(s.url + "/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == server.SessionCookie {
			return ck.Value
		}
	}
	return ""
}

// me calls GetCurrentUser as the console does, with c's cookies.
func (s *sso) me(c *http.Client) (*carillonv1.User, error) {
	users := carillonv1connect.NewUserServiceClient(c, s.url, connect.WithInterceptors(connect.UnaryInterceptorFunc(
		func(next connect.UnaryFunc) connect.UnaryFunc {
			return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
				req.Header().Set(server.ConsoleHeader, "1")
				return next(ctx, req)
			}
		})))
	res, err := users.GetCurrentUser(context.Background(), &carillonv1.GetCurrentUserRequest{})
	if err != nil {
		return nil, err
	}
	return res.User, nil
}

func ssoUser(sub, name string, groups ...string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: sub, PreferredUsername: name, Email: name + "@example.com", EmailVerified: true, Groups: groups}
}

// TestOIDCSignIn runs single sign-on end to end through a real provider:
// the login redirects to it with PKCE, a state and a nonce, the callback
// creates the user with the role its groups give, sets the console's
// session cookie and redirects to the console, where an authenticated
// RPC works; the sign-in is audited; the next sign-in follows the groups.
func TestOIDCSignIn(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s := setupSSO(t, be, nil)

		// The login's redirect to the provider.
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := noFollow.Get(s.url + server.OIDCLoginPath)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		to, _ := url.Parse(res.Header.Get("Location"))
		q := to.Query()
		if res.StatusCode != http.StatusFound || !strings.HasPrefix(to.String(), s.idp.AuthorizationEndpoint()) ||
			q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" || q.Get("nonce") == "" ||
			q.Get("redirect_uri") != s.url+server.OIDCCallbackPath {
			t.Errorf("login: %d to %s, want a redirect to the provider with PKCE S256, a state, a nonce and the callback", res.StatusCode, to)
		}
		if sc := res.Header.Get("Set-Cookie"); !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") || !strings.Contains(sc, "Path=/auth/oidc/") {
			t.Errorf("login cookie %q: want HttpOnly, SameSite=Lax, Path=/auth/oidc/", sc)
		}

		c := browser(t)
		code, last, body := s.signIn(t, c, ssoUser("sub-ada", "ada", "ops", "design"))
		if code != http.StatusOK || last.Path != "/" || body != "the console" {
			t.Fatalf("sign-in ended on %d %s %q, want the console at /", code, last, body)
		}
		if v := s.sessionCookie(c); !auth.IsConsoleSession(v) {
			t.Errorf("session cookie %q is not a console session", v)
		}
		me, err := s.me(c)
		if err != nil {
			t.Fatalf("an RPC with the SSO session: %v", err)
		}
		billing, err := s.store.Groups.ByApp(ctx, "billing")
		if err != nil {
			t.Fatal(err)
		}
		if me.Username != "ada" || me.Role != carillonv1.Role_ROLE_MEMBER || !slices.Equal(me.GroupIds, []int64{billing.ID}) ||
			me.SsoIssuer != s.idp.Issuer() || me.SsoSubject != "sub-ada" {
			t.Errorf("the SSO user: %v, want ada, a MEMBER of billing (the group ops maps to; the missing app skipped)", me)
		}
		entries, err := s.store.Audit.Log(ctx, store.AuditFilter{Action: server.AuditSSOSignIn})
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].UserID != me.Id || entries[0].Username != "ada" || !strings.Contains(entries[0].Detail, "sub-ada") {
			t.Errorf("audit of the sign-in: %+v", entries)
		}

		// The same person, now in the ADMIN group, under another name.
		c2 := browser(t)
		if code, last, _ := s.signIn(t, c2, ssoUser("sub-ada", "ada.lovelace", "admins")); code != http.StatusOK || last.Path != "/" {
			t.Fatalf("second sign-in ended on %d %s", code, last)
		}
		again, err := s.me(c2)
		if err != nil || again.Id != me.Id || again.Role != carillonv1.Role_ROLE_ADMIN || len(again.GroupIds) != 0 {
			t.Errorf("second sign-in: %v (%v), want the same user, now an ADMIN", again, err)
		}
		if _, err := s.me(c); err != nil {
			t.Errorf("the first session ended with the second sign-in: %v", err)
		}
	})
}

// TestOIDCRoles checks who is refused: a person in none of the groups
// that give a role (unless --oidc-default-role viewer), a disabled user,
// a person the provider names with no usable username; a refused person
// gets a page saying why and no session, and nothing is written.
func TestOIDCRoles(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s := setupSSO(t, be, nil)
		c := browser(t)
		code, _, body := s.signIn(t, c, ssoUser("sub-eve", "eve", "design"))
		if code != http.StatusForbidden || !strings.Contains(body, "in none of the groups") || s.sessionCookie(c) != "" {
			t.Errorf("a person in no mapped group: %d %q, want 403 saying why, and no session", code, body)
		}
		if _, err := s.store.Users.ByName(ctx, "eve"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the refused person became a user: %v", err)
		}
		code, _, body = s.signIn(t, c, &mockoidc.MockUser{Subject: "sub-x", PreferredUsername: "x", Email: "x@example.com", Groups: []string{"admins"}})
		if code != http.StatusForbidden || !strings.Contains(body, "no preferred_username nor verified email") {
			t.Errorf("no usable username (too short, email unverified): %d %q", code, body)
		}
		if code, _, _ := s.signIn(t, c, ssoUser("sub-bob", "bob", "admins")); code != http.StatusOK {
			t.Fatalf("bob: %d", code)
		}
		bob, err := s.store.Users.ByName(ctx, "bob")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.store.Users.Update(ctx, store.User{ID: bob.ID, Role: auth.RoleAdmin, Disabled: true}, time.Now()); err != nil {
			t.Fatal(err)
		}
		code, _, body = s.signIn(t, browser(t), ssoUser("sub-bob", "bob", "admins"))
		if code != http.StatusForbidden || !strings.Contains(body, "disabled") {
			t.Errorf("a disabled user: %d %q", code, body)
		}

		viewer := setupSSO(t, be, func(c *server.Config) { c.OIDC.ViewerByDefault = true })
		c = browser(t)
		if code, _, body := viewer.signIn(t, c, ssoUser("sub-eve", "eve", "design")); code != http.StatusOK {
			t.Fatalf("with viewers by default: %d %q", code, body)
		}
		if me, err := viewer.me(c); err != nil || me.Role != carillonv1.Role_ROLE_VIEWER {
			t.Errorf("with viewers by default: %v (%v), want a VIEWER", me, err)
		}
	})
}

// TestOIDCChecks checks that the callback refuses what is not the
// browser's own sign-in: a state that is not its cookie's, no cookie, an
// ID token with another nonce, an error from the provider.
func TestOIDCChecks(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s := setupSSO(t, be, nil)

		c := browser(t)
		c.CheckRedirect = func(r *http.Request, _ []*http.Request) error {
			if r.URL.Path == server.OIDCCallbackPath {
				q := r.URL.Query()
				q.Set("state", "forged")
				r.URL.RawQuery = q.Encode()
			}
			return nil
		}
		code, last, body := s.signIn(t, c, ssoUser("sub-ada", "ada", "admins"))
		if code != http.StatusBadRequest || last.Path != server.OIDCCallbackPath || !strings.Contains(body, "state") || s.sessionCookie(c) != "" {
			t.Errorf("forged state: %d at %s %q, want 400 saying so, and no session", code, last, body)
		}

		if code, body := get(t, s.url+server.OIDCCallbackPath+"?state=a&code=b"); code != http.StatusBadRequest || !strings.Contains(body, "cookie is missing") {
			t.Errorf("a callback without the login cookie: %d %q", code, body)
		}

		s.tamperNonce.Store(true)
		c = browser(t)
		code, _, body = s.signIn(t, c, ssoUser("sub-ada", "ada", "admins"))
		if code != http.StatusUnauthorized || !strings.Contains(body, "nonce") || s.sessionCookie(c) != "" {
			t.Errorf("another nonce: %d %q, want 401 saying so, and no session", code, body)
		}
		s.tamperNonce.Store(false)

		code, body = get(t, s.url+server.OIDCCallbackPath+"?error=access_denied&error_description=no+thanks")
		if code != http.StatusUnauthorized || !strings.Contains(body, "access_denied no thanks") {
			t.Errorf("the provider's error: %d %q", code, body)
		}

		if _, err := s.store.Users.ByName(ctx, "ada"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a refused sign-in made a user: %v", err)
		}
	})
}

// TestOIDCLinksLocalUser checks that a person whose preferred_username is
// a local user's name signs in as that user, whose password keeps working,
// and that --local-login=false refuses passwords.
func TestOIDCLinksLocalUser(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		s := setupSSO(t, be, nil)
		addUser(t, s.store, "grace", auth.RoleViewer)
		c := browser(t)
		if code, _, body := s.signIn(t, c, ssoUser("sub-grace", "Grace", "ops")); code != http.StatusOK {
			t.Fatalf("sign-in: %d %q", code, body)
		}
		me, err := s.me(c)
		if err != nil {
			t.Fatal(err)
		}
		local, err := s.store.Users.ByName(ctx, "grace")
		if err != nil || me.Id != local.ID || me.Role != carillonv1.Role_ROLE_MEMBER {
			t.Errorf("signed in as %v, want the local grace (%v), now a MEMBER", me, err)
		}
		users := carillonv1connect.NewUserServiceClient(http.DefaultClient, s.url)
		if _, err := users.Login(ctx, &carillonv1.LoginRequest{Username: "grace", Password: passwordOf("grace")}); err != nil {
			t.Errorf("the linked user's password: %v", err)
		}
		methods := func(url string) string {
			_, body := get(t, url+server.AuthMethodsPath)
			return strings.TrimSpace(body)
		}
		if got := methods(s.url); got != `{"sso":true,"password":true}` {
			t.Errorf("auth methods: %s", got)
		}

		noPasswords := setupSSO(t, be, func(c *server.Config) { c.LocalLoginDisabled = true })
		addUser(t, noPasswords.store, "grace", auth.RoleViewer)
		_, err = carillonv1connect.NewUserServiceClient(http.DefaultClient, noPasswords.url).Login(ctx,
			&carillonv1.LoginRequest{Username: "grace", Password: passwordOf("grace")})
		if connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "--local-login=false") {
			t.Errorf("a password with --local-login=false: %v, want failed_precondition naming the flag", err)
		}
		if got := methods(noPasswords.url); got != `{"sso":true,"password":false}` {
			t.Errorf("auth methods without passwords: %s", got)
		}
		c = browser(t)
		if code, _, _ := noPasswords.signIn(t, c, ssoUser("sub-grace", "grace", "ops")); code != http.StatusOK {
			t.Errorf("SSO without passwords: %d", code)
		}
	})
}

// TestOIDCProviderDown: a provider that cannot be reached does not keep
// the admin from serving; a sign-in then shows a page saying so.
func TestOIDCProviderDown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/oidc"
	ln.Close() // nothing listens there now
	b := setupWith(t, dbtest.SQLite, "", func(c *server.Config, u string) {
		c.OIDC = &server.OIDC{Issuer: down, ClientID: "carillon", PublicURL: u, Key: []byte(server.NewOIDCKey())}
	})
	code, body := get(t, b.url+server.OIDCLoginPath)
	if code != http.StatusBadGateway || !strings.Contains(body, "cannot be reached") || !strings.Contains(body, down) {
		t.Errorf("a sign-in with the provider down: %d %q, want 502 naming the provider", code, body)
	}
}

package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/dbtest"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestSessionCookie checks the console's session: Login with cookie sets an
// HttpOnly, SameSite=Strict cookie and returns no token; the cookie
// authenticates only requests with the console's header and not from
// another site; its value is refused as a bearer token; Logout clears it.
func TestSessionCookie(t *testing.T) {
	t.Parallel()
	dbtest.Backends(t, func(t *testing.T, be dbtest.Backend) {
		ctx := context.Background()
		b := setup(t, be, "s3cret")
		addUser(t, b.store, "ada", auth.RoleViewer)
		var setCookie string
		login := connect.NewRequest(&carillonv1.LoginRequest{Username: "ada", Password: passwordOf("ada"), Cookie: true})
		res, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, b.url, connect.WithInterceptors(
			connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
				return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
					res, err := next(ctx, req)
					if err == nil {
						setCookie = res.Header().Get("Set-Cookie")
					}
					return res, err
				}
			}))).Login(ctx, login.Msg)
		if err != nil {
			t.Fatal(err)
		}
		if res.Token != "" {
			t.Errorf("Login with cookie returned the token in the body")
		}
		for _, want := range []string{"carillon_session=carillon_c_", "HttpOnly", "SameSite=Strict", "Path=/"} {
			if !strings.Contains(setCookie, want) {
				t.Errorf("Set-Cookie %q lacks %q", setCookie, want)
			}
		}
		if strings.Contains(setCookie, "Secure") {
			t.Errorf("Set-Cookie %q is Secure over plain HTTP (the browser would never send it)", setCookie)
		}
		cookie := strings.SplitN(setCookie, ";", 2)[0]
		call := func(header ...string) (int, string) {
			req, _ := http.NewRequest(http.MethodPost, b.url+"/carillon.v1.UserService/GetCurrentUser", strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Cookie", cookie)
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Body.Close()
			var sb strings.Builder
			buf := make([]byte, 4096)
			n, _ := r.Body.Read(buf)
			sb.Write(buf[:n])
			return r.StatusCode, sb.String()
		}
		if code, body := call("X-Carillon-Console", "1", "Sec-Fetch-Site", "same-origin"); code != 200 || !strings.Contains(body, `"ada"`) {
			t.Errorf("cookie with the console's header: %d %s", code, body)
		}
		if code, body := call(); code != http.StatusForbidden {
			t.Errorf("cookie without the console's header (a cross-site form): %d %s, want 403", code, body)
		}
		if code, body := call("X-Carillon-Console", "1", "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden {
			t.Errorf("cookie from another site: %d %s, want 403", code, body)
		}
		// The cookie's value is not a bearer token, with or without the
		// console's header: read where the browser sent it (another service on
		// the host name), it gets nothing through the API.
		value := strings.TrimPrefix(cookie, "carillon_session=")
		for _, console := range []string{"", "1"} {
			req, _ := http.NewRequest(http.MethodPost, b.url+"/carillon.v1.UserService/GetCurrentUser", strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+value)
			if console != "" {
				req.Header.Set("X-Carillon-Console", console)
			}
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != http.StatusUnauthorized {
				t.Errorf("the console's session as a bearer token (console header %q): %d, want 401", console, r.StatusCode)
			}
		}
		if code, body := call("X-Carillon-Console", "1"); code != 200 {
			t.Errorf("the cookie after its value was refused as a bearer token: %d %s", code, body)
		}
		// A login without cookie gives a session token that is a bearer token.
		cli, err := carillonv1connect.NewUserServiceClient(http.DefaultClient, b.url).Login(ctx,
			&carillonv1.LoginRequest{Username: "ada", Password: passwordOf("ada")})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(cli.Token, auth.SessionPrefix) {
			t.Fatalf("Login without cookie returned %q, want a session token", cli.Token)
		}
		req, _ := http.NewRequest(http.MethodPost, b.url+"/carillon.v1.UserService/GetCurrentUser", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+cli.Token)
		if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 200 {
			t.Errorf("a login's session token as a bearer token: %v %v, want 200", r, err)
		} else {
			r.Body.Close()
		}
		// Logout clears the cookie and ends the session.
		req, _ = http.NewRequest(http.MethodPost, b.url+"/carillon.v1.UserService/Logout", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Cookie", cookie)
		req.Header.Set("X-Carillon-Console", "1")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 200 || !strings.Contains(r.Header.Get("Set-Cookie"), "Max-Age=0") {
			t.Errorf("Logout: %d, Set-Cookie %q, want the cookie cleared", r.StatusCode, r.Header.Get("Set-Cookie"))
		}
		if code, _ := call("X-Carillon-Console", "1"); code != http.StatusUnauthorized {
			t.Errorf("the cookie after Logout: %d, want 401", code)
		}
	})
}

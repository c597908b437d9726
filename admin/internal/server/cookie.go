package server

import (
	"context"
	"errors"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/auth"
)

// The web console's session is an HttpOnly cookie, so page scripts never
// hold it (a script injected into the page cannot send it elsewhere).
// Against cross-site request forgery, a request the cookie authenticates
// must also carry ConsoleHeader, which a cross-site page cannot send without
// a CORS preflight the admin never allows, and must not say it comes from
// another site (Sec-Fetch-Site); SameSite=Strict keeps the cookie off
// cross-site requests in the first place. Bearer-header clients (curl,
// the CLI, the typed clients) are unaffected. The cookie's session is a
// console session (auth.NewConsoleSessionToken), which is never taken as
// a bearer token: a cookie value read where the browser sent it (another
// service on the same host name: cookies are not port-scoped) cannot be
// used without the console's header and origin.
const (
	// SessionCookie is the name of the console's session cookie.
	SessionCookie = "carillon_session"
	// ConsoleHeader must be "1" on every request a session cookie
	// authenticates.
	ConsoleHeader = "X-Carillon-Console"
)

// credential returns the Authorization value of a management call: its
// header, or the session cookie for a same-site console request.
func credential(h http.Header) (string, error) {
	if a := h.Get("Authorization"); a != "" {
		if token, _ := auth.Bearer(a); auth.IsConsoleSession(token) {
			return "", connect.NewError(connect.CodeUnauthenticated, errors.New(
				"a console session is taken only as the console's cookie, not as a bearer token: "+
					"log in with `carillon login` (UserService/Login without cookie) or use an API token"))
		}
		return a, nil
	}
	c, err := (&http.Request{Header: h}).Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return "", nil
	}
	if h.Get(ConsoleHeader) != "1" {
		return "", connect.NewError(connect.CodePermissionDenied,
			errors.New("a session cookie is taken only with the header "+ConsoleHeader+": 1 (requests of the console)"))
	}
	if site := h.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return "", connect.NewError(connect.CodePermissionDenied,
			errors.New("a session cookie is taken only from the console's own origin, not from "+site))
	}
	return "Bearer " + c.Value, nil
}

// setSessionCookie sets the session cookie on the call's response.
func (s *Server) setSessionCookie(ctx context.Context, token string, expires time.Time) {
	info, ok := connect.CallInfoForHandlerContext(ctx)
	if !ok {
		return
	}
	info.ResponseHeader().Add("Set-Cookie", s.sessionCookie(token, expires).String())
}

// sessionCookie is the console's session cookie of token, expiring at
// expires; "" clears it.
func (s *Server) sessionCookie(token string, expires time.Time) *http.Cookie {
	c := &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true, Secure: s.cfg.TLS, //nolint:gosec // Secure when the admin serves TLS; HttpOnly and SameSite=Strict always
		SameSite: http.SameSiteStrictMode, Expires: expires}
	if token == "" {
		c.MaxAge = -1
	}
	return c
}

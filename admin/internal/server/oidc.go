package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// Single sign-on with OpenID Connect: GET /auth/oidc/login sends the
// browser to the provider (the authorization-code flow with PKCE, a state
// and a nonce), GET /auth/oidc/callback takes it back, checks it, signs
// the user in (oidcsignin.go) and sets the console's session cookie.
const (
	// OIDCLoginPath starts a sign-in by single sign-on.
	OIDCLoginPath = "/auth/oidc/login"
	// OIDCCallbackPath is where the provider sends the browser back; the
	// provider must know PublicURL + OIDCCallbackPath as a redirect URI.
	OIDCCallbackPath = "/auth/oidc/callback"
	// AuthMethodsPath answers, without a credential, how one signs in:
	// {"sso": bool, "password": bool}, for the console's sign-in page.
	AuthMethodsPath = "/auth/methods"
	// oidcLoginCookie carries a sign-in's state, nonce and PKCE verifier
	// from the login to the callback, signed with OIDC.Key.
	oidcLoginCookie = "carillon_oidc"
	// oidcLoginTTL is how long a sign-in may take at the provider.
	oidcLoginTTL = 10 * time.Minute
	// oidcHTTPTimeout bounds each request to the provider.
	oidcHTTPTimeout = 15 * time.Second
)

// OIDC configures single sign-on with an OpenID Connect provider.
type OIDC struct {
	// Issuer is the provider's issuer URL (its discovery document is at
	// Issuer + "/.well-known/openid-configuration"). Required.
	Issuer string
	// ClientID and ClientSecret are the admin's client at the provider.
	ClientID, ClientSecret string
	// PublicURL is the admin's URL as browsers reach it; the redirect URI
	// is PublicURL + OIDCCallbackPath. Required.
	PublicURL string
	// Scopes asked for. Defaults to openid, profile and email.
	Scopes []string
	// GroupsClaim names the ID token's claim that lists the user's groups.
	// Defaults to "groups".
	GroupsClaim string
	// AdminGroups: a user in any of them is an ADMIN.
	AdminGroups []string
	// MemberGroups maps a provider's group to executor groups' app names:
	// a user in it (and in no AdminGroups) is a MEMBER granted those.
	MemberGroups map[string][]string
	// ViewerByDefault makes a user in none of those groups a VIEWER;
	// otherwise such a user is refused.
	ViewerByDefault bool
	// Key signs the login cookie. Required; the same on every admin of a
	// database (admin.Open keeps it in the database's settings).
	Key []byte
	// HTTPClient reaches the provider. Defaults to a client whose requests
	// time out after oidcHTTPTimeout: a provider that does not answer
	// fails the sign-in instead of holding it (and the next ones) forever.
	HTTPClient *http.Client
}

// oidcFlow runs single sign-on: the configuration and the provider's
// metadata, discovered on first use (an unreachable provider does not
// keep the admin from starting; it is tried again at the next sign-in).
type oidcFlow struct {
	cfg      OIDC
	mu       sync.Mutex
	provider *oidc.Provider
}

func newOIDCFlow(cfg OIDC) *oidcFlow {
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{oidc.ScopeOpenID, "profile", "email"}
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: oidcHTTPTimeout}
	}
	cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	return &oidcFlow{cfg: cfg}
}

// clientContext is ctx that reaches the provider with the configured client.
func (f *oidcFlow) clientContext(ctx context.Context) context.Context {
	return oidc.ClientContext(ctx, f.cfg.HTTPClient)
}

// discover returns the provider's metadata, fetching it the first time.
func (f *oidcFlow) discover(ctx context.Context) (*oidc.Provider, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.provider != nil {
		return f.provider, nil
	}
	// The provider's key set fetches keys later with this context.
	p, err := oidc.NewProvider(f.clientContext(context.WithoutCancel(ctx)), f.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("the identity provider %s cannot be reached or answered wrong: %w", f.cfg.Issuer, err)
	}
	f.provider = p
	return p, nil
}

// oauth2 returns the OAuth 2 client configuration at provider p.
func (f *oidcFlow) oauth2(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: f.cfg.ClientID, ClientSecret: f.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: f.cfg.PublicURL + OIDCCallbackPath, Scopes: f.cfg.Scopes}
}

// oidcLogin is one sign-in in progress, carried by the login cookie.
type oidcLogin struct {
	state, nonce, verifier string
	expires                time.Time
}

// randomString returns 32 random bytes, base64url-encoded.
func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// encode returns l as a cookie value signed with key: its fields, then
// their HMAC-SHA256, separated by dots (none of the fields has one).
func (l oidcLogin) encode(key []byte) string {
	v := strings.Join([]string{l.state, l.nonce, l.verifier, strconv.FormatInt(l.expires.Unix(), 10)}, ".")
	return v + "." + sign(key, v)
}

func sign(key []byte, v string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(v))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// decodeOIDCLogin returns the sign-in of a cookie value made by encode
// with key, unless it is forged, malformed or expired at now.
func decodeOIDCLogin(key []byte, v string, now time.Time) (oidcLogin, error) {
	i := strings.LastIndexByte(v, '.')
	if i < 0 || !hmac.Equal([]byte(v[i+1:]), []byte(sign(key, v[:i]))) {
		return oidcLogin{}, errors.New("the sign-in cookie is missing or not this admin's")
	}
	parts := strings.Split(v[:i], ".")
	if len(parts) != 4 {
		return oidcLogin{}, errors.New("the sign-in cookie is malformed")
	}
	exp, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil {
		return oidcLogin{}, errors.New("the sign-in cookie is malformed")
	}
	l := oidcLogin{state: parts[0], nonce: parts[1], verifier: parts[2], expires: time.Unix(exp, 0)}
	if !now.Before(l.expires) {
		return oidcLogin{}, fmt.Errorf("the sign-in took longer than %s", oidcLoginTTL)
	}
	return l, nil
}

// loginCookie is the login cookie with value v: sent back only to the
// callback, on the provider's redirect too (SameSite=Lax: a top-level
// navigation from the provider's site), never to page scripts.
func (s *Server) loginCookie(v string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: oidcLoginCookie, Value: v, Path: "/auth/oidc/", MaxAge: maxAge, HttpOnly: true, //nolint:gosec // Secure over HTTPS; Lax, not Strict, so that the provider's redirect brings it back
		Secure: s.cfg.TLS || strings.HasPrefix(s.oidc.cfg.PublicURL, "https://"), SameSite: http.SameSiteLaxMode}
}

// oidcLoginHandler starts a sign-in: a new state, nonce and PKCE verifier
// in the signed login cookie, and a redirect to the provider.
func (s *Server) oidcLoginHandler(w http.ResponseWriter, r *http.Request) {
	p, err := s.oidc.discover(r.Context())
	if err != nil {
		s.oidcFailed(w, r, http.StatusBadGateway, err)
		return
	}
	l := oidcLogin{state: randomString(), nonce: randomString(), verifier: oauth2.GenerateVerifier(),
		expires: s.cfg.NowFunc().Add(oidcLoginTTL)}
	http.SetCookie(w, s.loginCookie(l.encode(s.oidc.cfg.Key), int(oidcLoginTTL/time.Second)))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, s.oidc.oauth2(p).AuthCodeURL(l.state, oidc.Nonce(l.nonce), oauth2.S256ChallengeOption(l.verifier)), http.StatusFound)
}

// oidcCallbackHandler ends a sign-in: the provider's answer is checked
// (state, code exchanged with the PKCE verifier, ID token verified, its
// nonce), the user signed in (signInOIDC), the session cookie set as Login
// with cookie does, and the browser sent to the console.
func (s *Server) oidcCallbackHandler(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, s.loginCookie("", -1)) // one sign-in, one use
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		s.oidcFailed(w, r, http.StatusUnauthorized, fmt.Errorf("the identity provider refused the sign-in: %s %s", e, q.Get("error_description")))
		return
	}
	now := s.cfg.NowFunc()
	var l oidcLogin
	c, err := r.Cookie(oidcLoginCookie)
	if err == nil {
		l, err = decodeOIDCLogin(s.oidc.cfg.Key, c.Value, now)
	} else {
		err = errors.New("the sign-in cookie is missing (cookies blocked, or the sign-in was not started here)")
	}
	if err == nil && subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(l.state)) != 1 {
		err = errors.New("the state the identity provider sent back is not this browser's sign-in's")
	}
	if err != nil {
		s.oidcFailed(w, r, http.StatusBadRequest, err)
		return
	}
	p, err := s.oidc.discover(r.Context())
	if err != nil {
		s.oidcFailed(w, r, http.StatusBadGateway, err)
		return
	}
	ctx := s.oidc.clientContext(r.Context())
	tok, err := s.oidc.oauth2(p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(l.verifier))
	if err != nil {
		s.oidcFailed(w, r, http.StatusBadGateway, fmt.Errorf("the identity provider did not exchange the code: %w", err))
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		s.oidcFailed(w, r, http.StatusBadGateway, errors.New("the identity provider sent no ID token"))
		return
	}
	id, err := p.VerifierContext(ctx, &oidc.Config{ClientID: s.oidc.cfg.ClientID}).Verify(ctx, raw)
	if err != nil {
		s.oidcFailed(w, r, http.StatusUnauthorized, fmt.Errorf("the ID token does not verify: %w", err))
		return
	}
	if subtle.ConstantTimeCompare([]byte(id.Nonce), []byte(l.nonce)) != 1 {
		s.oidcFailed(w, r, http.StatusUnauthorized, errors.New("the ID token's nonce is not this sign-in's"))
		return
	}
	token, expires, err := s.signInOIDC(r.Context(), id, r.RemoteAddr)
	if err != nil {
		s.oidcFailed(w, r, http.StatusForbidden, err)
		return
	}
	http.SetCookie(w, s.sessionCookie(token, expires))
	http.Redirect(w, r, "/", http.StatusFound)
}

// authMethodsHandler answers AuthMethodsPath.
func (s *Server) authMethodsHandler(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprintf(w, `{"sso":%t,"password":%t}`+"\n", s.oidc != nil, !s.cfg.LocalLoginDisabled)
}

// NewOIDCKey returns a new random key for OIDC.Key, as text.
func NewOIDCKey() string { return randomString() }

// errLocalLoginDisabled answers Login when local passwords are off.
var errLocalLoginDisabled = errors.New("passwords are disabled on this admin (serve --local-login=false): " +
	"sign in with SSO (" + OIDCLoginPath + "), or use an API token")

// oidcFailed logs a refused sign-in and shows why, with a way back.
func (s *Server) oidcFailed(w http.ResponseWriter, r *http.Request, code int, err error) {
	s.cfg.Logger.Warn("single sign-on refused", "err", err.Error(), "peer", r.RemoteAddr)
	writeSignInFailed(w, code, err.Error())
}

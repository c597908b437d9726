package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// AuditSSOSignIn is the audit log's action of a sign-in by single sign-on.
const AuditSSOSignIn = "SSO.SignIn"

// usernamePattern is User.username's rule (user.proto).
var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{2,63}$`)

// oidcClaims are the ID token's claims a sign-in uses.
type oidcClaims struct {
	Email             string `json:"email"`
	EmailVerified     *bool  `json:"email_verified"`
	PreferredUsername string `json:"preferred_username"`
}

// usernames returns the names the identity may have here, in order: the
// preferred_username, then the email if the provider verified it; each
// only if it is a valid username.
func (c oidcClaims) usernames() []string {
	var names []string
	if usernamePattern.MatchString(c.PreferredUsername) {
		names = append(names, c.PreferredUsername)
	}
	if c.EmailVerified != nil && *c.EmailVerified && usernamePattern.MatchString(c.Email) && !slices.Contains(names, c.Email) {
		names = append(names, c.Email)
	}
	return names
}

// groupsClaim returns the groups the ID token lists under name: a list of
// strings, or one string.
func groupsClaim(id *oidc.IDToken, name string) ([]string, error) {
	var all map[string]json.RawMessage
	if err := id.Claims(&all); err != nil {
		return nil, err
	}
	raw, ok := all[name]
	if !ok {
		return nil, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, fmt.Errorf("the ID token's %q claim is neither a list of strings nor a string", name)
	}
	return []string{one}, nil
}

// oidcRole returns the role and grants (app names) the provider's groups
// give: ADMIN for one of AdminGroups; MEMBER of the apps MemberGroups maps
// the groups to; else VIEWER with ViewerByDefault; else none (refused).
func (f *oidcFlow) oidcRole(groups []string) (auth.Role, []string) {
	var apps []string
	for _, g := range groups {
		if slices.Contains(f.cfg.AdminGroups, g) {
			return auth.RoleAdmin, nil
		}
		apps = append(apps, f.cfg.MemberGroups[g]...)
	}
	switch {
	case len(apps) > 0:
		slices.Sort(apps)
		return auth.RoleMember, slices.Compact(apps)
	case f.cfg.ViewerByDefault:
		return auth.RoleViewer, nil
	}
	return 0, nil
}

// signInOIDC signs in the person of a verified ID token: finds, links or
// creates the user (store.AuthStore.SignInOIDC), sets its role from its groups,
// and opens a console session, audited with the change. It returns the
// session's cookie token and expiry, or why the person is refused.
func (s *Server) signInOIDC(ctx context.Context, id *oidc.IDToken, peer string) (string, time.Time, error) {
	var c oidcClaims
	if err := id.Claims(&c); err != nil {
		return "", time.Time{}, fmt.Errorf("the ID token's claims do not read: %w", err)
	}
	names := c.usernames()
	if len(names) == 0 {
		return "", time.Time{}, fmt.Errorf("the ID token has no preferred_username nor verified email usable as a username "+
			"(3 to 64 letters, digits, '.', '_', '@' or '-'): preferred_username %q, email %q", c.PreferredUsername, c.Email)
	}
	groups, err := groupsClaim(id, s.oidc.cfg.GroupsClaim)
	if err != nil {
		return "", time.Time{}, err
	}
	role, apps := s.oidc.oidcRole(groups)
	if role == 0 {
		return "", time.Time{}, fmt.Errorf("%s is in none of the groups that give a role here (serve --oidc-admin-groups, --oidc-member-groups; "+
			"--oidc-default-role viewer lets everyone else read): its groups are %q", names[0], groups)
	}
	var grants []int64
	for _, app := range apps {
		g, err := s.cfg.Store.Groups.ByApp(ctx, app)
		if errors.Is(err, store.ErrNotFound) {
			s.cfg.Logger.Warn("single sign-on: --oidc-member-groups grants a group that does not exist", slog.String("app", app))
			continue
		}
		if err != nil {
			return "", time.Time{}, err
		}
		grants = append(grants, g.ID)
	}
	now := s.cfg.NowFunc()
	token, hash := auth.NewConsoleSessionToken()
	expires := now.Add(s.cfg.SessionTTL)
	detail, _ := json.Marshal(map[string]any{"issuer": id.Issuer, "subject": id.Subject, "role": role.String(), "groups": groups})
	ctx, audit := store.WithAudit(ctx, store.AuditEntry{At: now, Username: names[0], Action: AuditSSOSignIn, Detail: string(detail), Peer: peer})
	u, created, err := s.cfg.Store.Auth.SignInOIDC(ctx, store.OIDCSignIn{Issuer: id.Issuer, Subject: id.Subject, Usernames: names,
		Role: role, Groups: grants, SessionHash: hash, Expires: expires}, now)
	if err != nil {
		return "", time.Time{}, signInRefusal(err)
	}
	if err := s.cfg.Store.Audit.Complete(ctx, audit, func(e *store.AuditEntry) {
		e.UserID, e.Username, e.Target = u.ID, u.Username, fmt.Sprintf("user %d", u.ID)
	}); err != nil {
		s.cfg.Logger.Error("server: audit log", slog.String("action", AuditSSOSignIn), slog.Any("err", err))
	}
	s.cfg.Logger.Info("signed in by SSO", slog.String("username", u.Username), slog.String("role", u.Role.String()), slog.Bool("created", created))
	return token, expires, nil
}

// signInRefusal words the store's refusals of a sign-in for the person.
func signInRefusal(err error) error {
	switch {
	case errors.Is(err, store.ErrUserDisabled):
		return errors.New("your user is disabled here: ask an ADMIN")
	case errors.Is(err, store.ErrOIDCLinkedElsewhere):
		return errors.New("a user of your name here signs in with another identity: ask an ADMIN")
	case errors.Is(err, store.ErrLastAdmin):
		return errors.New("your groups would make the last enabled ADMIN something else: ask the identity provider's administrator, or sign in with your password")
	}
	return err
}

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

// SessionTTLDefault is the default Config.SessionTTL.
const SessionTTLDefault = 24 * time.Hour

// userService implements carillonv1connect.UserServiceHandler. The
// interceptor has authenticated the caller and checked the role class of
// each RPC (rules); handlers check ownership where it applies.
type userService struct{ *Server }

func userToProto(u store.User) *carillonv1.User {
	return &carillonv1.User{
		Id: u.ID, Username: u.Username, Role: carillonv1.Role(u.Role), GroupIds: u.Groups, Disabled: u.Disabled,
		CreatedAt: ts(u.CreatedAt), UpdatedAt: ts(u.UpdatedAt), LastLoginAt: ts(u.LastLoginAt),
		SsoIssuer: u.OIDCIssuer, SsoSubject: u.OIDCSubject,
	}
}

func apiTokenToProto(t store.APIToken) *carillonv1.ApiToken {
	return &carillonv1.ApiToken{
		Id: t.ID, UserId: t.UserID, Username: t.Username, Name: t.Name,
		CreatedAt: ts(t.CreatedAt), ExpiresAt: ts(t.ExpiresAt), LastUsedAt: ts(t.LastUsedAt),
	}
}

// userErr maps the store's user errors to Connect codes, then toConnect.
func (s userService) userErr(err error) error {
	switch {
	case errors.Is(err, store.ErrLastAdmin):
		return connect.NewError(connect.CodeFailedPrecondition, reworded{msg: strings.TrimPrefix(store.ErrLastAdmin.Error(), "store: "), err: err})
	case errors.Is(err, store.ErrGroupNotFound):
		return invalid("user.group_ids", "%v", reword(err, store.ErrGroupNotFound, "%s not found"))
	}
	return s.toConnect(err)
}

// checkUser checks a merged user: a known role, and grants only for a
// MEMBER.
func checkUser(u *carillonv1.User) error {
	if u.Role == carillonv1.Role_ROLE_UNSPECIFIED {
		return invalid("user.role", "must be ROLE_ADMIN, ROLE_MEMBER or ROLE_VIEWER, got %d", u.Role)
	}
	if u.Role != carillonv1.Role_ROLE_MEMBER && len(u.GroupIds) > 0 {
		return invalid("user.group_ids", "only a ROLE_MEMBER has group grants (%s sees every group)", u.Role)
	}
	return nil
}

// peerHost returns the client's address without its port, for the login
// limiter.
func peerHost(ctx context.Context) string {
	info, ok := connect.CallInfoForHandlerContext(ctx)
	if !ok {
		return ""
	}
	addr := info.Peer().Addr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

func (s userService) Login(ctx context.Context, req *carillonv1.LoginRequest) (*carillonv1.LoginResponse, error) {
	if s.cfg.LocalLoginDisabled {
		return nil, connect.NewError(connect.CodeFailedPrecondition, errLocalLoginDisabled)
	}
	now := s.cfg.NowFunc()
	peer := peerHost(ctx)
	if err := s.cfg.LoginLimiter.Allow(now, strings.ToLower(req.Username), peer); err != nil {
		s.cfg.Logger.Warn("login rate limited", slog.String("username", req.Username), slog.String("peer", peer))
		return nil, connect.NewError(connect.CodeResourceExhausted, err)
	}
	u, err := s.cfg.Store.Users.ByName(ctx, req.Username)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, s.toConnect(err)
	}
	// An unknown user is checked against a dummy hash: the same time, the
	// same answer.
	if err := auth.CheckPassword(u.PasswordHash, req.Password); err != nil {
		s.cfg.Logger.Info("login refused", slog.String("username", req.Username), slog.String("peer", peer))
		return nil, connect.NewError(connect.CodeUnauthenticated, errWrongLogin)
	}
	if u.Disabled {
		// The same answer as a wrong password: telling a disabled user apart
		// would confirm the password to whoever tried it.
		s.cfg.Logger.Info("login refused: the user is disabled", slog.String("username", req.Username), slog.String("peer", peer))
		return nil, connect.NewError(connect.CodeUnauthenticated, errWrongLogin)
	}
	token, hash := auth.NewSessionToken()
	if req.Cookie {
		token, hash = auth.NewConsoleSessionToken() // taken only as the cookie
	}
	expires := now.Add(s.cfg.SessionTTL)
	if _, err := s.cfg.Store.Auth.CreateSession(ctx, u.ID, hash, now, expires); err != nil {
		return nil, s.toConnect(err)
	}
	u.LastLoginAt = now
	if req.Cookie {
		s.setSessionCookie(ctx, token, expires)
		token = "" // page scripts never see the session
	}
	return &carillonv1.LoginResponse{Token: token, ExpiresAt: ts(expires), User: userToProto(u)}, nil
}

func (s userService) Logout(ctx context.Context, _ *carillonv1.LogoutRequest) (*carillonv1.LogoutResponse, error) {
	p := auth.FromContext(ctx)
	if p.Credential != auth.CredentialSession {
		return nil, connect.NewError(connect.CodeFailedPrecondition,
			errors.New("this call carries an API token, not a session: revoke API tokens with RevokeApiToken"))
	}
	if err := s.cfg.Store.Auth.DeleteSession(ctx, p.CredentialID); err != nil {
		return nil, s.toConnect(err)
	}
	s.setSessionCookie(ctx, "", time.Time{}) // the console's, if it was one
	return &carillonv1.LogoutResponse{}, nil
}

func (s userService) GetCurrentUser(ctx context.Context, _ *carillonv1.GetCurrentUserRequest) (*carillonv1.GetCurrentUserResponse, error) {
	u, err := s.cfg.Store.Users.Get(ctx, auth.FromContext(ctx).UserID)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.GetCurrentUserResponse{User: userToProto(u)}, nil
}

func (s userService) ChangePassword(ctx context.Context, req *carillonv1.ChangePasswordRequest) (*carillonv1.ChangePasswordResponse, error) {
	p := auth.FromContext(ctx)
	u, err := s.cfg.Store.Users.Get(ctx, p.UserID)
	if err != nil {
		return nil, s.toConnect(err)
	}
	if err := auth.CheckPassword(u.PasswordHash, req.OldPassword); err != nil {
		return nil, invalid("old_password", "is not your current password")
	}
	hash, err := auth.HashPassword(req.NewPassword, s.cfg.PasswordCost)
	if err != nil {
		return nil, invalid("new_password", "%v", err)
	}
	keep := int64(0)
	if p.Credential == auth.CredentialSession {
		keep = p.CredentialID
	}
	if err := s.cfg.Store.Users.SetPassword(ctx, u.ID, hash, keep, s.cfg.NowFunc()); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.ChangePasswordResponse{}, nil
}

func (s userService) CreateUser(ctx context.Context, req *carillonv1.CreateUserRequest) (*carillonv1.CreateUserResponse, error) {
	if err := checkUser(req.User); err != nil {
		return nil, err
	}
	hash, err := auth.HashPassword(req.Password, s.cfg.PasswordCost)
	if err != nil {
		return nil, invalid("password", "%v", err)
	}
	u, err := s.cfg.Store.Users.Create(ctx, store.User{
		Username: req.User.Username, PasswordHash: hash, Role: auth.Role(req.User.Role), Groups: req.User.GroupIds,
		Disabled: req.User.Disabled,
	}, s.cfg.NowFunc())
	if err != nil {
		return nil, s.userErr(err)
	}
	return &carillonv1.CreateUserResponse{User: userToProto(u)}, nil
}

func (s userService) UnlockUser(ctx context.Context, req *carillonv1.UnlockUserRequest) (*carillonv1.UnlockUserResponse, error) {
	u, err := s.cfg.Store.Users.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	s.cfg.LoginLimiter.Unlock(strings.ToLower(u.Username))
	return &carillonv1.UnlockUserResponse{}, nil
}

func (s userService) GetUser(ctx context.Context, req *carillonv1.GetUserRequest) (*carillonv1.GetUserResponse, error) {
	u, err := s.cfg.Store.Users.Get(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.GetUserResponse{User: userToProto(u)}, nil
}

func (s userService) ListUsers(ctx context.Context, _ *carillonv1.ListUsersRequest) (*carillonv1.ListUsersResponse, error) {
	us, err := s.cfg.Store.Users.List(ctx)
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListUsersResponse{}
	for _, u := range us {
		res.Users = append(res.Users, userToProto(u))
	}
	return res, nil
}

// userOutputFields cannot be set by UpdateUser.
// errWrongLogin answers every refused login (unknown user, wrong password,
// disabled user) alike, in the caller's words: no package prefix.
var errWrongLogin = errors.New("wrong username or password")

var userOutputFields = []string{"id", "username", "created_at", "updated_at", "last_login_at", "sso_issuer", "sso_subject"}

func (s userService) UpdateUser(ctx context.Context, req *carillonv1.UpdateUserRequest) (*carillonv1.UpdateUserResponse, error) {
	old, err := s.cfg.Store.Users.Get(ctx, req.User.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	merged := userToProto(old)
	if err := applyMask(merged, req.User, req.UpdateMask, "user", userOutputFields); err != nil {
		return nil, err
	}
	if err := checkUser(merged); err != nil {
		return nil, err
	}
	u := store.User{ID: old.ID, Role: auth.Role(merged.Role), Groups: merged.GroupIds, Disabled: merged.Disabled}
	if req.Password != "" {
		if u.PasswordHash, err = auth.HashPassword(req.Password, s.cfg.PasswordCost); err != nil {
			return nil, invalid("password", "%v", err)
		}
	}
	if u, err = s.cfg.Store.Users.Update(ctx, u, s.cfg.NowFunc()); err != nil {
		return nil, s.userErr(err)
	}
	return &carillonv1.UpdateUserResponse{User: userToProto(u)}, nil
}

func (s userService) DeleteUser(ctx context.Context, req *carillonv1.DeleteUserRequest) (*carillonv1.DeleteUserResponse, error) {
	if req.Id == auth.FromContext(ctx).UserID {
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("you cannot delete yourself; another ADMIN can"))
	}
	if err := s.cfg.Store.Users.Delete(ctx, req.Id); err != nil {
		return nil, s.userErr(err)
	}
	return &carillonv1.DeleteUserResponse{}, nil
}

func (s userService) CreateApiToken(ctx context.Context, req *carillonv1.CreateApiTokenRequest) (*carillonv1.CreateApiTokenResponse, error) {
	p := auth.FromContext(ctx)
	now := s.cfg.NowFunc()
	token, hash := auth.NewAPIToken()
	t := store.APIToken{UserID: p.UserID, Name: req.Name, TokenHash: hash}
	if req.ExpiresInSeconds > 0 {
		t.ExpiresAt = now.Add(time.Duration(req.ExpiresInSeconds) * time.Second)
	}
	t, err := s.cfg.Store.Auth.CreateToken(ctx, t, now)
	if errors.Is(err, store.ErrAlreadyExists) {
		return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("name: you already have an API token named %q", req.Name))
	}
	if err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.CreateApiTokenResponse{Token: token, ApiToken: apiTokenToProto(t)}, nil
}

func (s userService) ListApiTokens(ctx context.Context, req *carillonv1.ListApiTokensRequest) (*carillonv1.ListApiTokensResponse, error) {
	userID := req.UserId
	switch {
	case req.AllUsers:
		userID = 0
	case userID == 0:
		userID = auth.FromContext(ctx).UserID
	}
	ts, err := s.cfg.Store.Auth.Tokens(ctx, userID)
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListApiTokensResponse{}
	for _, t := range ts {
		res.ApiTokens = append(res.ApiTokens, apiTokenToProto(t))
	}
	return res, nil
}

func (s userService) RevokeApiToken(ctx context.Context, req *carillonv1.RevokeApiTokenRequest) (*carillonv1.RevokeApiTokenResponse, error) {
	p := auth.FromContext(ctx)
	t, err := s.cfg.Store.Auth.Token(ctx, req.Id)
	if err != nil {
		return nil, s.toConnect(err)
	}
	if t.UserID != p.UserID && !p.Admin() {
		return nil, denied("id", "API token %d is not yours", req.Id)
	}
	if err := s.cfg.Store.Auth.DeleteToken(ctx, req.Id); err != nil {
		return nil, s.toConnect(err)
	}
	return &carillonv1.RevokeApiTokenResponse{}, nil
}

func (s userService) ListAuditLog(ctx context.Context, req *carillonv1.ListAuditLogRequest) (*carillonv1.ListAuditLogResponse, error) {
	size, err := pageSize(req.PageSize)
	if err != nil {
		return nil, err
	}
	before, err := pageToken(req.PageToken)
	if err != nil {
		return nil, err
	}
	es, err := s.cfg.Store.Audit.Log(ctx, store.AuditFilter{
		Username: req.Username, Action: req.Action, From: fromTS(req.From), To: fromTS(req.To), BeforeID: before, Limit: size + 1,
	})
	if err != nil {
		return nil, s.toConnect(err)
	}
	res := &carillonv1.ListAuditLogResponse{}
	res.Entries, res.NextPageToken = page(es, size, func(e store.AuditEntry) *carillonv1.AuditEntry {
		return &carillonv1.AuditEntry{
			Id: e.ID, Time: ts(e.At), UserId: e.UserID, Username: e.Username, Action: e.Action,
			Target: e.Target, Detail: e.Detail, Peer: e.Peer,
		}
	}, func(e store.AuditEntry) int64 { return e.ID })
	return res, nil
}

func (s userService) GetExecutorToken(context.Context, *carillonv1.GetExecutorTokenRequest) (*carillonv1.GetExecutorTokenResponse, error) {
	if s.tokens().Global() == "" {
		return nil, connect.NewError(connect.CodeFailedPrecondition,
			errors.New("the admin runs with --insecure and no global executor token: executors of groups without a token of their own need none"))
	}
	return &carillonv1.GetExecutorTokenResponse{Token: s.tokens().Global(), Generated: s.cfg.TokenGenerated}, nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// UserStore keeps the console's users (Store.Users).
type UserStore struct{ *db }

// ErrLastAdmin is returned when a change would leave no enabled ADMIN.
var ErrLastAdmin = errors.New("store: the last enabled ADMIN must stay an enabled ADMIN")

// User is a user of the management API.
type User struct {
	ID           int64
	Username     string
	PasswordHash string
	Role         auth.Role
	// Groups are a MEMBER's granted group IDs, sorted.
	Groups      []int64
	Disabled    bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
	LastLoginAt time.Time
	// OIDCIssuer and OIDCSubject are the single sign-on identity linked to
	// the user (SignInOIDC); empty when none is.
	OIDCIssuer, OIDCSubject string
}

// userColumns are the columns scanUser reads: principalColumns, and the
// single sign-on identity migration 0020 added. Only the reads by username
// ignoring case use them: they compare through the dialect (equalFold), so
// they stay by hand; the other reads of users are dbsqlc's (UserByID,
// Users, UserByOIDC), made users by userOf.
const (
	principalColumns = `id, username, password_hash, role, disabled, created_at, updated_at, last_login_at`
	userColumns      = principalColumns + `, oidc_issuer, oidc_subject`
)

type userQueryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var created, updated, login sql.NullInt64
	var issuer, subject sql.NullString
	if err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Role, &u.Disabled, &created, &updated, &login, &issuer, &subject); err != nil {
		return User{}, err
	}
	u.CreatedAt, u.UpdatedAt, u.LastLoginAt = fromMillis(created), fromMillis(updated), fromMillis(login)
	u.OIDCIssuer, u.OIDCSubject = issuer.String, subject.String
	return u, nil
}

// userOf is the user of a row of dbsqlc.UserByID (or Users, UserByOIDC:
// the same columns), without its Groups (userGroups).
func userOf(r dbsqlc.UserByIDRow) User {
	return User{ID: r.ID, Username: r.Username, PasswordHash: r.PasswordHash, Role: r.Role, Disabled: r.Disabled,
		CreatedAt: time.UnixMilli(r.CreatedAt), UpdatedAt: time.UnixMilli(r.UpdatedAt), LastLoginAt: fromMillis(r.LastLoginAt),
		OIDCIssuer: r.OidcIssuer.String, OIDCSubject: r.OidcSubject.String}
}

// userByID reads user id in tx; ErrNotFound when there is none.
func userByID(ctx context.Context, tx *sql.Tx, id int64) (User, error) {
	r, err := dbsqlc.New(tx).UserByID(ctx, id)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("%w: user %d", ErrNotFound, id)
	}
	if err != nil {
		return User{}, err
	}
	return userOf(r), nil
}

// userGroups fills the Groups of us from user_groups. Its statement names
// the users' IDs in a list as long as us: it is built here, not by sqlc.
func userGroups(ctx context.Context, q userQueryer, us []User) error {
	if len(us) == 0 {
		return nil
	}
	idx := map[int64]int{}
	ids := make([]string, len(us))
	for i, u := range us {
		idx[u.ID] = i
		ids[i] = fmt.Sprint(u.ID)
	}
	rows, err := q.QueryContext(ctx, `SELECT user_id, group_id FROM user_groups WHERE user_id IN (`+strings.Join(ids, ",")+`) ORDER BY user_id, group_id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var uid, gid int64
		if err := rows.Scan(&uid, &gid); err != nil {
			return err
		}
		us[idx[uid]].Groups = append(us[idx[uid]].Groups, gid)
	}
	return rows.Err()
}

// setUserGroups replaces the groups granted to user userID with groups;
// a group that does not exist is ErrGroupNotFound.
func setUserGroups(ctx context.Context, tx *sql.Tx, userID int64, groups []int64) error {
	q := dbsqlc.New(tx)
	if err := q.DeleteUserGroups(ctx, userID); err != nil {
		return err
	}
	for _, g := range groups {
		if err := groupExists(ctx, tx, g); err != nil {
			return err
		}
		if err := q.InsertUserGroup(ctx, dbsqlc.InsertUserGroupParams{UserID: userID, GroupID: g}); err != nil {
			return err
		}
	}
	return nil
}

// Create stores u and returns it with its ID. A taken username (ignoring
// case) is ErrAlreadyExists; a granted group that does not exist is
// ErrGroupNotFound.
func (s UserStore) Create(ctx context.Context, u User, now time.Time) (User, error) {
	now = now.Truncate(time.Millisecond)
	u.CreatedAt, u.UpdatedAt = now, now
	u.Groups = uniqueSortedIDs(u.Groups)
	err := s.write(ctx, func(tx *sql.Tx) (err error) {
		u.ID, err = dbsqlc.New(tx).CreateUser(ctx, dbsqlc.CreateUserParams{Username: u.Username, PasswordHash: u.PasswordHash,
			Role: u.Role, Disabled: boolInt(u.Disabled), CreatedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli()})
		if err != nil {
			return err
		}
		return setUserGroups(ctx, tx, u.ID, u.Groups)
	})
	switch {
	case err == nil:
		return u, nil
	case isUniqueViolation(err):
		return User{}, fmt.Errorf("%w: a user named %q", ErrAlreadyExists, u.Username)
	case errors.Is(err, ErrGroupNotFound):
		return User{}, err
	}
	return User{}, fmt.Errorf("store: create user: %w", err)
}

// Get returns the user with the given ID.
func (s UserStore) Get(ctx context.Context, id int64) (User, error) {
	r, err := dbsqlc.New(s.reader(ctx)).UserByID(ctx, id)
	return s.userWithGroups(ctx, userOf(r), err, id)
}

// ByName returns the user with the given username, ignoring case. Its
// statement compares through the dialect (equalFold): it stays by hand.
func (s UserStore) ByName(ctx context.Context, username string) (User, error) {
	u, err := scanUser(s.reader(ctx).QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE `+s.d.equalFold(`username`, `$1`), username))
	return s.userWithGroups(ctx, u, err, username)
}

// userWithGroups completes u, read with err, with its groups; arg is what it
// was read by, for the errors.
func (s *db) userWithGroups(ctx context.Context, u User, err error, arg any) (User, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("%w: user %v", ErrNotFound, arg)
	}
	if err != nil {
		return User{}, fmt.Errorf("store: user %v: %w", arg, err)
	}
	us := []User{u}
	if err := userGroups(ctx, s.r, us); err != nil {
		return User{}, fmt.Errorf("store: user %v: %w", arg, err)
	}
	return us[0], nil
}

// List returns every user ordered by username.
func (s UserStore) List(ctx context.Context) ([]User, error) {
	rows, err := dbsqlc.New(s.reader(ctx)).Users(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	var us []User
	for _, r := range rows {
		us = append(us, userOf(dbsqlc.UserByIDRow(r)))
	}
	if err := userGroups(ctx, s.r, us); err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	return us, nil
}

// Count returns the number of users.
func (s UserStore) Count(ctx context.Context) (int64, error) {
	n, err := dbsqlc.New(s.reader(ctx)).UserCount(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: count users: %w", err)
	}
	return n, nil
}

// enabledAdmin reports whether u keeps the admin in charge.
func enabledAdmin(u User) bool { return u.Role == auth.RoleAdmin && !u.Disabled }

// keepAnAdmin returns ErrLastAdmin when old is the only enabled ADMIN.
func keepAnAdmin(ctx context.Context, tx *sql.Tx, old User) error {
	if !enabledAdmin(old) {
		return nil
	}
	n, err := dbsqlc.New(tx).EnabledUserCount(ctx, auth.RoleAdmin)
	if err != nil {
		return err
	}
	if n <= 1 {
		return fmt.Errorf("%w: %q is the only one", ErrLastAdmin, old.Username)
	}
	return nil
}

// Update changes the role, groups and disabled flag of the user with
// ID u.ID, and, when u.PasswordHash is set, its password. A new password
// or disabling the user ends its sessions and revokes its API tokens, for
// good: enabling the user again revives none. A change that leaves no
// enabled ADMIN is ErrLastAdmin.
func (s UserStore) Update(ctx context.Context, u User, now time.Time) (User, error) {
	u.Groups = uniqueSortedIDs(u.Groups)
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := userByID(ctx, tx, u.ID)
		if err != nil {
			return err
		}
		if !enabledAdmin(u) {
			if err := keepAnAdmin(ctx, tx, old); err != nil {
				return err
			}
		}
		q := dbsqlc.New(tx)
		if err := q.UpdateUser(ctx, dbsqlc.UpdateUserParams{Role: u.Role, Disabled: boolInt(u.Disabled), UpdatedAt: now.UnixMilli(), ID: u.ID}); err != nil {
			return err
		}
		if u.PasswordHash != "" {
			if _, err := q.SetUserPassword(ctx, dbsqlc.SetUserPasswordParams{PasswordHash: u.PasswordHash, UpdatedAt: now.UnixMilli(), ID: u.ID}); err != nil {
				return err
			}
		}
		if u.PasswordHash != "" || (u.Disabled && !old.Disabled) {
			if err := endCredentials(ctx, tx, u.ID, 0); err != nil {
				return err
			}
		}
		return setUserGroups(ctx, tx, u.ID, u.Groups)
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrLastAdmin) || errors.Is(err, ErrGroupNotFound) {
			return User{}, err
		}
		return User{}, fmt.Errorf("store: update user %d: %w", u.ID, err)
	}
	return s.Get(ctx, u.ID)
}

// SetPassword replaces a user's password hash, ends the user's sessions but
// keepSession (0 for none) and revokes its API tokens.
func (s UserStore) SetPassword(ctx context.Context, userID int64, hash string, keepSession int64, now time.Time) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := dbsqlc.New(tx).SetUserPassword(ctx, dbsqlc.SetUserPasswordParams{PasswordHash: hash, UpdatedAt: now.UnixMilli(), ID: userID})
		if err != nil {
			return err
		}
		if err := mustAffect(res, "user", userID); err != nil {
			return err
		}
		return endCredentials(ctx, tx, userID, keepSession)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: set password of user %d: %w", userID, err)
	}
	return err
}

// endCredentials ends the sessions of user userID but keepSession (0 for
// none) and revokes its API tokens.
func endCredentials(ctx context.Context, tx *sql.Tx, userID, keepSession int64) error {
	q := dbsqlc.New(tx)
	if err := q.EndUserSessions(ctx, dbsqlc.EndUserSessionsParams{UserID: userID, KeepSession: keepSession}); err != nil {
		return err
	}
	return q.DeleteUserTokens(ctx, userID)
}

// Delete removes a user with its grants, sessions and API tokens.
// Deleting the last enabled ADMIN is ErrLastAdmin.
func (s UserStore) Delete(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := userByID(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := keepAnAdmin(ctx, tx, old); err != nil {
			return err
		}
		return dbsqlc.New(tx).DeleteUser(ctx, id)
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrLastAdmin) {
		return fmt.Errorf("store: delete user %d: %w", id, err)
	}
	return err
}

func uniqueSortedIDs(ids []int64) []int64 {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// ResetAdmin is the way back in when no ADMIN can log in: it sets the
// password hash of user username, creating the user if it is missing, and
// makes it an enabled ADMIN without group grants, ending its sessions and
// revoking its API tokens. It returns the user. Its read by username
// compares through the dialect (equalFold): that statement stays by hand.
func (s UserStore) ResetAdmin(ctx context.Context, username, hash string, now time.Time) (User, error) {
	var id int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		q := dbsqlc.New(tx)
		err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE `+s.d.equalFold(`username`, `$1`), username).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			id, err = q.CreateUser(ctx, dbsqlc.CreateUserParams{Username: username, PasswordHash: hash, Role: auth.RoleAdmin,
				CreatedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli()})
			return err
		}
		if err != nil {
			return err
		}
		if err := q.ResetAdmin(ctx, dbsqlc.ResetAdminParams{PasswordHash: hash, Role: auth.RoleAdmin, UpdatedAt: now.UnixMilli(), ID: id}); err != nil {
			return err
		}
		if err := setUserGroups(ctx, tx, id, nil); err != nil {
			return err
		}
		return endCredentials(ctx, tx, id, 0)
	})
	if err != nil {
		return User{}, fmt.Errorf("store: reset admin %q: %w", username, err)
	}
	return s.Get(ctx, id)
}

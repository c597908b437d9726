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

// principalColumns are the user's columns a credential's check reads;
// userColumns all that scanUser reads.
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

// userGroups fills the Groups of us from user_groups.
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

func setUserGroups(ctx context.Context, tx *sql.Tx, userID int64, groups []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_groups WHERE user_id = $1`, userID); err != nil {
		return err
	}
	for _, g := range groups {
		if err := groupExists(ctx, tx, g); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO user_groups (user_id, group_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, userID, g); err != nil {
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
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx,
			`INSERT INTO users (username, password_hash, role, disabled, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
			u.Username, u.PasswordHash, u.Role, boolInt(u.Disabled), millis(now), millis(now)).Scan(&u.ID); err != nil {
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
	return s.userWhere(ctx, `id = $1`, id)
}

// ByName returns the user with the given username, ignoring case.
func (s UserStore) ByName(ctx context.Context, username string) (User, error) {
	return s.userWhere(ctx, s.d.equalFold(`username`, `$1`), username)
}

// userWhere returns the user that cond selects, with arg its $1.
func (s *db) userWhere(ctx context.Context, cond string, arg any) (User, error) {
	u, err := scanUser(s.reader(ctx).QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE `+cond, arg))
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
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY username`)
	if err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	var us []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			rows.Close() //nolint:sqlclosecheck // closed on every path before the transaction's next statement, which a deferred Close would come after
			return nil, fmt.Errorf("store: users: %w", err)
		}
		us = append(us, u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	if err := userGroups(ctx, s.r, us); err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	return us, nil
}

// Count returns the number of users.
func (s UserStore) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := s.reader(ctx).QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n); err != nil {
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
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role = $1 AND disabled = 0`, auth.RoleAdmin).Scan(&n)
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
		old, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, u.ID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: user %d", ErrNotFound, u.ID)
		}
		if err != nil {
			return err
		}
		if !enabledAdmin(u) {
			if err := keepAnAdmin(ctx, tx, old); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET role = $1, disabled = $2, updated_at = $3 WHERE id = $4`,
			u.Role, boolInt(u.Disabled), millis(now), u.ID); err != nil {
			return err
		}
		if u.PasswordHash != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE id = $2`, u.PasswordHash, u.ID); err != nil {
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
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1, updated_at = $2 WHERE id = $3`, hash, millis(now), userID)
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
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1 AND id != $2`, userID, keepSession); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM api_tokens WHERE user_id = $1`, userID)
	return err
}

// Delete removes a user with its grants, sessions and API tokens.
// Deleting the last enabled ADMIN is ErrLastAdmin.
func (s UserStore) Delete(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: user %d", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if err := keepAnAdmin(ctx, tx, old); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM users WHERE id = $1`, id)
		return err
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
// revoking its API tokens. It returns the user.
func (s UserStore) ResetAdmin(ctx context.Context, username, hash string, now time.Time) (User, error) {
	var id int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE `+s.d.equalFold(`username`, `$1`), username).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return tx.QueryRowContext(ctx, `INSERT INTO users (username, password_hash, role, disabled, created_at, updated_at) VALUES ($1, $2, $3, 0, $4, $5) RETURNING id`,
				username, hash, auth.RoleAdmin, millis(now), millis(now)).Scan(&id)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = $1, role = $2, disabled = 0, updated_at = $3 WHERE id = $4`,
			hash, auth.RoleAdmin, millis(now), id); err != nil {
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

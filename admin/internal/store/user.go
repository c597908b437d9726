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
}

const userColumns = `id, username, password_hash, role, disabled, created_at, updated_at, last_login_at`

type userQueryer interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var created, updated, login sql.NullInt64
	if err := row.Scan(&u.ID, &u.Username, &u.PasswordHash, &u.Role, &u.Disabled, &created, &updated, &login); err != nil {
		return User{}, err
	}
	u.CreatedAt, u.UpdatedAt, u.LastLoginAt = fromMillis(created), fromMillis(updated), fromMillis(login)
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
	if _, err := tx.ExecContext(ctx, `DELETE FROM user_groups WHERE user_id = ?`, userID); err != nil {
		return err
	}
	for _, g := range groups {
		if err := groupExists(ctx, tx, g); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO user_groups (user_id, group_id) VALUES (?, ?)`, userID, g); err != nil {
			return err
		}
	}
	return nil
}

// CreateUser stores u and returns it with its ID. A taken username (ignoring
// case) is ErrAlreadyExists; a granted group that does not exist is
// ErrGroupNotFound.
func (s *Store) CreateUser(ctx context.Context, u User, now time.Time) (User, error) {
	now = now.Truncate(time.Millisecond)
	u.CreatedAt, u.UpdatedAt = now, now
	u.Groups = uniqueSortedIDs(u.Groups)
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`INSERT INTO users (username, password_hash, role, disabled, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			u.Username, u.PasswordHash, u.Role, u.Disabled, millis(now), millis(now))
		if err != nil {
			return err
		}
		if u.ID, err = res.LastInsertId(); err != nil {
			return err
		}
		return setUserGroups(ctx, tx, u.ID, u.Groups)
	})
	switch {
	case err == nil:
		return u, nil
	case isUniqueViolation(err):
		return User{}, fmt.Errorf("%w: user %q", ErrAlreadyExists, u.Username)
	case errors.Is(err, ErrGroupNotFound):
		return User{}, err
	}
	return User{}, fmt.Errorf("store: create user: %w", err)
}

// User returns the user with the given ID.
func (s *Store) User(ctx context.Context, id int64) (User, error) {
	return s.userWhere(ctx, `id = ?`, id)
}

// UserByName returns the user with the given username, ignoring case.
func (s *Store) UserByName(ctx context.Context, username string) (User, error) {
	return s.userWhere(ctx, `username = ?`, username)
}

func (s *Store) userWhere(ctx context.Context, cond string, arg any) (User, error) {
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

// Users returns every user ordered by username.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY username`)
	if err != nil {
		return nil, fmt.Errorf("store: users: %w", err)
	}
	var us []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			rows.Close()
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

// CountUsers returns the number of users.
func (s *Store) CountUsers(ctx context.Context) (int64, error) {
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
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role = ? AND disabled = 0`, auth.RoleAdmin).Scan(&n)
	if err != nil {
		return err
	}
	if n <= 1 {
		return fmt.Errorf("%w: %q is the only one", ErrLastAdmin, old.Username)
	}
	return nil
}

// UpdateUser changes the role, groups and disabled flag of the user with
// ID u.ID, and, when u.PasswordHash is set, its password. A new password
// or disabling the user ends its sessions and revokes its API tokens, for
// good: enabling the user again revives none. A change that leaves no
// enabled ADMIN is ErrLastAdmin.
func (s *Store) UpdateUser(ctx context.Context, u User, now time.Time) (User, error) {
	u.Groups = uniqueSortedIDs(u.Groups)
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, u.ID))
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
		if _, err := tx.ExecContext(ctx, `UPDATE users SET role = ?, disabled = ?, updated_at = ? WHERE id = ?`,
			u.Role, u.Disabled, millis(now), u.ID); err != nil {
			return err
		}
		if u.PasswordHash != "" {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, u.PasswordHash, u.ID); err != nil {
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
	return s.User(ctx, u.ID)
}

// SetPassword replaces a user's password hash, ends the user's sessions but
// keepSession (0 for none) and revokes its API tokens.
func (s *Store) SetPassword(ctx context.Context, userID int64, hash string, keepSession int64, now time.Time) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?`, hash, millis(now), userID)
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
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND id != ?`, userID, keepSession); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM api_tokens WHERE user_id = ?`, userID)
	return err
}

// DeleteUser removes a user with its grants, sessions and API tokens.
// Deleting the last enabled ADMIN is ErrLastAdmin.
func (s *Store) DeleteUser(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: user %d", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if err := keepAnAdmin(ctx, tx, old); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrLastAdmin) {
		return fmt.Errorf("store: delete user %d: %w", id, err)
	}
	return err
}

// CreateSession stores a session of the user by its token hash, expiring
// at expires, records the login time, and drops expired sessions. It
// returns the session's ID.
func (s *Store) CreateSession(ctx context.Context, userID int64, tokenHash string, now, expires time.Time) (int64, error) {
	var id int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, millis(now)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO sessions (user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?)`,
			userID, tokenHash, millis(now), millis(expires))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET last_login_at = ? WHERE id = ?`, millis(now), userID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: create session: %w", err)
	}
	return id, nil
}

// DeleteSession ends a session.
func (s *Store) DeleteSession(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return mustAffect(res, "session", id)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: delete session %d: %w", id, err)
	}
	return err
}

// apiTokenTouchEvery is how stale an API token's last_used_at may get
// before a use writes it again: a write per request would cost more than
// the answer is worth.
const apiTokenTouchEvery = time.Minute

// Principal returns who a credential belongs to, by its kind and token
// hash. An unknown or expired credential, or one of a disabled user, is
// ErrNotFound.
func (s *Store) Principal(ctx context.Context, kind auth.CredentialKind, tokenHash string, now time.Time) (auth.Principal, error) {
	var q string
	switch kind {
	case auth.CredentialSession:
		q = `SELECT c.id, c.expires_at, NULL, ` + qualifyColumns("u.", userColumns) + ` FROM sessions c JOIN users u ON u.id = c.user_id WHERE c.token_hash = ?`
	case auth.CredentialAPIToken:
		q = `SELECT c.id, c.expires_at, c.last_used_at, ` + qualifyColumns("u.", userColumns) + ` FROM api_tokens c JOIN users u ON u.id = c.user_id WHERE c.token_hash = ?`
	default:
		return auth.Principal{}, fmt.Errorf("%w: credential", ErrNotFound)
	}
	var credID int64
	var expires, lastUsed, created, updated, login sql.NullInt64
	var u User
	err := s.reader(ctx).QueryRowContext(ctx, q, tokenHash).Scan(&credID, &expires, &lastUsed,
		&u.ID, &u.Username, &u.PasswordHash, &u.Role, &u.Disabled, &created, &updated, &login)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.Principal{}, fmt.Errorf("%w: credential", ErrNotFound)
	}
	if err != nil {
		return auth.Principal{}, fmt.Errorf("store: credential: %w", err)
	}
	if (expires.Valid && expires.Int64 <= now.UnixMilli()) || u.Disabled {
		return auth.Principal{}, fmt.Errorf("%w: credential (expired, or its user is disabled)", ErrNotFound)
	}
	us := []User{u}
	if u.Role == auth.RoleMember {
		if err := userGroups(ctx, s.r, us); err != nil {
			return auth.Principal{}, fmt.Errorf("store: credential: %w", err)
		}
	}
	if kind == auth.CredentialAPIToken && (!lastUsed.Valid || now.Sub(fromMillis(lastUsed)) >= apiTokenTouchEvery) {
		err := s.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, millis(now), credID)
			return err
		})
		if err != nil {
			return auth.Principal{}, fmt.Errorf("store: credential: %w", err)
		}
	}
	return auth.Principal{
		UserID: u.ID, Username: u.Username, Role: u.Role, Groups: us[0].Groups, Credential: kind, CredentialID: credID,
	}, nil
}

func qualifyColumns(prefix, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// APIToken describes an API token; the token itself is not kept.
type APIToken struct {
	ID         int64
	UserID     int64
	Username   string
	Name       string
	TokenHash  string
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: never
	LastUsedAt time.Time
}

const apiTokenColumns = `t.id, t.user_id, u.username, t.name, t.token_hash, t.created_at, t.expires_at, t.last_used_at`

func scanAPIToken(row interface{ Scan(...any) error }) (APIToken, error) {
	var t APIToken
	var created, expires, used sql.NullInt64
	if err := row.Scan(&t.ID, &t.UserID, &t.Username, &t.Name, &t.TokenHash, &created, &expires, &used); err != nil {
		return APIToken{}, err
	}
	t.CreatedAt, t.ExpiresAt, t.LastUsedAt = fromMillis(created), fromMillis(expires), fromMillis(used)
	return t, nil
}

// CreateAPIToken stores t and returns it with its ID. A name the user
// already has is ErrAlreadyExists.
func (s *Store) CreateAPIToken(ctx context.Context, t APIToken, now time.Time) (APIToken, error) {
	t.CreatedAt = now.Truncate(time.Millisecond)
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO api_tokens (user_id, name, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
			t.UserID, t.Name, t.TokenHash, millis(t.CreatedAt), millis(t.ExpiresAt))
		if err != nil {
			return err
		}
		t.ID, err = res.LastInsertId()
		return err
	})
	if isUniqueViolation(err) {
		return APIToken{}, fmt.Errorf("%w: API token %q", ErrAlreadyExists, t.Name)
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("store: create API token: %w", err)
	}
	return s.APIToken(ctx, t.ID)
}

// APIToken returns the API token with the given ID.
func (s *Store) APIToken(ctx context.Context, id int64) (APIToken, error) {
	t, err := scanAPIToken(s.reader(ctx).QueryRowContext(ctx,
		`SELECT `+apiTokenColumns+` FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return APIToken{}, fmt.Errorf("%w: API token %d", ErrNotFound, id)
	}
	if err != nil {
		return APIToken{}, fmt.Errorf("store: API token %d: %w", id, err)
	}
	return t, nil
}

// APITokens returns the API tokens of a user (every user's for 0),
// ordered by ID.
func (s *Store) APITokens(ctx context.Context, userID int64) ([]APIToken, error) {
	rows, err := s.reader(ctx).QueryContext(ctx,
		`SELECT `+apiTokenColumns+` FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE ? = 0 OR t.user_id = ? ORDER BY t.id`,
		userID, userID)
	if err != nil {
		return nil, fmt.Errorf("store: API tokens: %w", err)
	}
	defer rows.Close()
	var ts []APIToken
	for rows.Next() {
		t, err := scanAPIToken(rows)
		if err != nil {
			return nil, fmt.Errorf("store: API tokens: %w", err)
		}
		ts = append(ts, t)
	}
	return ts, rows.Err()
}

// DeleteAPIToken revokes an API token.
func (s *Store) DeleteAPIToken(ctx context.Context, id int64) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM api_tokens WHERE id = ?`, id)
		if err != nil {
			return err
		}
		return mustAffect(res, "API token", id)
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("store: delete API token %d: %w", id, err)
	}
	return err
}

// AuditEntry records one management change.
type AuditEntry struct {
	ID       int64
	At       time.Time
	UserID   int64
	Username string
	// Action is the RPC, e.g. "JobService.UpdateJob".
	Action string
	// Target is what it changed, e.g. "job 7".
	Target string
	// Detail is the request as JSON, without secrets.
	Detail string
	Peer   string
}

// AddAudit appends e to the audit log.
func (s *Store) AddAudit(ctx context.Context, e AuditEntry) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_log (at, user_id, username, action, target, detail, peer) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			millis(e.At), e.UserID, e.Username, e.Action, e.Target, e.Detail, e.Peer)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: add audit entry: %w", err)
	}
	return nil
}

// AuditFilter selects audit entries. Zero fields select everything.
type AuditFilter struct {
	Username string
	Action   string
	// From <= at < To.
	From, To time.Time
	// BeforeID pages: only entries with a smaller ID.
	BeforeID int64
	Limit    int
}

// AuditLog returns the entries f selects, newest first.
func (s *Store) AuditLog(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	where, args := []string{"1 = 1"}, []any{}
	add := func(cond string, arg any) { where, args = append(where, cond), append(args, arg) }
	if f.BeforeID > 0 {
		add("id < ?", f.BeforeID)
	}
	if f.Username != "" {
		add("username = ? COLLATE NOCASE", f.Username)
	}
	if f.Action != "" {
		add("action = ?", f.Action)
	}
	if !f.From.IsZero() {
		add("at >= ?", f.From.UnixMilli())
	}
	if !f.To.IsZero() {
		add("at < ?", f.To.UnixMilli())
	}
	args = append(args, cmpLimit(f.Limit))
	rows, err := s.reader(ctx).QueryContext(ctx, `SELECT id, at, user_id, username, action, target, detail, peer FROM audit_log WHERE `+
		strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: audit log: %w", err)
	}
	defer rows.Close()
	var es []AuditEntry
	for rows.Next() {
		var e AuditEntry
		var at sql.NullInt64
		if err := rows.Scan(&e.ID, &at, &e.UserID, &e.Username, &e.Action, &e.Target, &e.Detail, &e.Peer); err != nil {
			return nil, fmt.Errorf("store: audit log: %w", err)
		}
		e.At = fromMillis(at)
		es = append(es, e)
	}
	return es, rows.Err()
}

// Setting returns the value of an admin setting; ErrNotFound when unset.
func (s *Store) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := s.reader(ctx).QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("%w: setting %s", ErrNotFound, name)
	}
	if err != nil {
		return "", fmt.Errorf("store: setting %s: %w", name, err)
	}
	return v, nil
}

// InitSetting stores value under name unless the setting exists, and
// returns the value in force and whether it was stored now.
func (s *Store) InitSetting(ctx context.Context, name, value string, now time.Time) (string, bool, error) {
	stored := false
	err := s.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&value)
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		stored = true
		_, err = tx.ExecContext(ctx, `INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)`, name, value, millis(now))
		return err
	})
	if err != nil {
		return "", false, fmt.Errorf("store: init setting %s: %w", name, err)
	}
	return value, stored, nil
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
func (s *Store) ResetAdmin(ctx context.Context, username, hash string, now time.Time) (User, error) {
	var id int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT id FROM users WHERE username = ? COLLATE NOCASE`, username).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			res, err := tx.ExecContext(ctx, `INSERT INTO users (username, password_hash, role, disabled, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)`,
				username, hash, auth.RoleAdmin, millis(now), millis(now))
			if err != nil {
				return err
			}
			id, err = res.LastInsertId()
			return err
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ?, role = ?, disabled = 0, updated_at = ? WHERE id = ?`,
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
	return s.User(ctx, id)
}

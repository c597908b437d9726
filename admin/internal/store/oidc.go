package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store/dbsqlc"
)

// Errors of SignInOIDC: the sign-in is refused and nothing is written.
var (
	// ErrUserDisabled is a sign-in of a disabled user.
	ErrUserDisabled = errors.New("store: the user is disabled")
	// ErrOIDCLinkedElsewhere is a sign-in whose username is that of a user
	// linked to another single sign-on identity.
	ErrOIDCLinkedElsewhere = errors.New("store: the user is linked to another single sign-on identity")
)

// OIDCSignIn is a sign-in by single sign-on: the identity the provider
// vouches for, the user it may be, what it makes the user, and the
// session it opens.
type OIDCSignIn struct {
	// Issuer and Subject identify the person at the provider (the ID
	// token's "iss" and "sub").
	Issuer, Subject string
	// Usernames are the names of existing users the identity may be
	// linked to, in order, when no user has it yet; the first is the
	// username of a user created when none of them exists.
	Usernames []string
	// Role and Groups (a MEMBER's grants) are set on the user at every
	// sign-in: the provider's groups decide them.
	Role   auth.Role
	Groups []int64
	// SessionHash and Expires make the session (as CreateSession).
	SessionHash string
	Expires     time.Time
}

// SignInOIDC finds the user of a single sign-on identity, in one
// transaction: the user linked to (Issuer, Subject), else the first user
// named in Usernames (ignoring case), which is linked now, else a new user
// named Usernames[0] without a password (it signs in only by SSO until an
// ADMIN sets one). It sets the user's role and grants, opens a session and
// returns the user and whether it was created. A disabled user is
// ErrUserDisabled; a username linked to another identity is
// ErrOIDCLinkedElsewhere; demoting the last enabled ADMIN is ErrLastAdmin;
// a grant of a missing group is ErrGroupNotFound. A refused sign-in writes
// nothing.
func (s AuthStore) SignInOIDC(ctx context.Context, in OIDCSignIn, now time.Time) (User, bool, error) {
	now = now.Truncate(time.Millisecond)
	var id int64
	created := false
	err := s.write(ctx, func(tx *sql.Tx) error {
		created = false
		u, err := oidcUser(ctx, tx, s.d, in)
		switch {
		case errors.Is(err, ErrNotFound):
			created = true
			if id, err = dbsqlc.New(tx).CreateOIDCUser(ctx, dbsqlc.CreateOIDCUserParams{Username: in.Usernames[0], Role: in.Role,
				CreatedAt: now.UnixMilli(), UpdatedAt: now.UnixMilli(), OidcIssuer: oidcID(in.Issuer), OidcSubject: oidcID(in.Subject)}); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			id = u.ID
			if err := setOIDCRole(ctx, tx, u, in, now); err != nil {
				return err
			}
		}
		if err := setUserGroups(ctx, tx, id, uniqueSortedIDs(in.Groups)); err != nil {
			return err
		}
		_, err = startSession(ctx, tx, id, in.SessionHash, now, in.Expires)
		return err
	})
	if err != nil {
		for _, known := range []error{ErrUserDisabled, ErrOIDCLinkedElsewhere, ErrLastAdmin, ErrGroupNotFound} {
			if errors.Is(err, known) {
				return User{}, false, err
			}
		}
		return User{}, false, fmt.Errorf("store: sign in %s by SSO: %w", in.Subject, err)
	}
	u, err := UserStore(s).Get(ctx, id)
	return u, created, err
}

// oidcID is an issuer or subject as the users' nullable columns hold
// it: never NULL (a user without single sign-on has NULLs).
func oidcID(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }

// oidcUser returns the user of in's identity, linking it to a user named
// in in.Usernames if none has it yet; ErrNotFound when there is neither.
// The reads by username compare through the dialect (equalFold): they
// stay by hand.
func oidcUser(ctx context.Context, tx *sql.Tx, d dialect, in OIDCSignIn) (User, error) {
	q := dbsqlc.New(tx)
	r, err := q.UserByOIDC(ctx, dbsqlc.UserByOIDCParams{OidcIssuer: oidcID(in.Issuer), OidcSubject: oidcID(in.Subject)})
	if err == nil {
		return userOf(dbsqlc.UserByIDRow(r)), nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return User{}, err
	}
	for _, name := range in.Usernames {
		u, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE `+d.equalFold(`username`, `$1`), name))
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return User{}, err
		}
		if u.OIDCSubject != "" {
			return User{}, fmt.Errorf("%w: %q", ErrOIDCLinkedElsewhere, u.Username)
		}
		if u.Disabled {
			return User{}, fmt.Errorf("%w: %q", ErrUserDisabled, u.Username)
		}
		if err := q.LinkOIDC(ctx, dbsqlc.LinkOIDCParams{OidcIssuer: oidcID(in.Issuer), OidcSubject: oidcID(in.Subject), ID: u.ID}); err != nil {
			return User{}, err
		}
		return u, nil
	}
	return User{}, ErrNotFound
}

// setOIDCRole gives the existing user u in's role; updated_at moves only
// when the role or the grants change.
func setOIDCRole(ctx context.Context, tx *sql.Tx, u User, in OIDCSignIn, now time.Time) error {
	if u.Disabled {
		return fmt.Errorf("%w: %q", ErrUserDisabled, u.Username)
	}
	if in.Role != auth.RoleAdmin {
		if err := keepAnAdmin(ctx, tx, u); err != nil {
			return err
		}
	}
	us := []User{u}
	if err := userGroups(ctx, tx, us); err != nil {
		return err
	}
	if u.Role == in.Role && slices.Equal(us[0].Groups, uniqueSortedIDs(in.Groups)) {
		return nil
	}
	return dbsqlc.New(tx).SetUserRole(ctx, dbsqlc.SetUserRoleParams{Role: in.Role, UpdatedAt: now.UnixMilli(), ID: u.ID})
}

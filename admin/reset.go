package admin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
)

// ResetAdminPassword is the way back in when no ADMIN can log in (a lost
// password, every ADMIN disabled or deleted). On the database file at
// dbPath, which no admin may be serving (the admin's lock on the file
// refuses it), it sets the password of user username (FirstAdminUsername
// when empty), creating the user if it is missing, and makes the user an
// enabled ADMIN, ending its sessions and revoking its API tokens; the audit
// log records it. An empty password is generated; the password set is
// returned.
func ResetAdminPassword(ctx context.Context, dbPath, username, password string, passwordCost int) (string, error) {
	username = strings.TrimSpace(username)
	if username == "" {
		username = FirstAdminUsername
	}
	if password == "" {
		password = auth.GeneratePassword()
	}
	hash, err := auth.HashPassword(password, passwordCost)
	if err != nil {
		return "", fmt.Errorf("%w: password: %w", ErrConfig, err)
	}
	if _, err := os.Stat(dbPath); err != nil {
		return "", fmt.Errorf("%w: no database at %s (--db): %w", ErrConfig, dbPath, err)
	}
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return "", fmt.Errorf("%w: stop the admin serving %s first: %w", ErrConfig, dbPath, err)
		}
		return "", err
	}
	defer func() { _ = st.Close() }()
	now := time.Now()
	ctx, _ = store.WithAudit(ctx, store.AuditEntry{At: now, Username: "(host)", Action: "carillon reset-admin-password",
		Target: "user " + username, Peer: "the admin's host"})
	if _, err := st.Users.ResetAdmin(ctx, username, hash, now); err != nil {
		return "", err
	}
	return password, nil
}

package auth

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

const (
	// PasswordCostDefault is the bcrypt cost of new password hashes.
	PasswordCostDefault = bcrypt.DefaultCost
	// PasswordMinLen is the shortest password accepted, in bytes.
	PasswordMinLen = 8
	// PasswordMaxLen is the longest password accepted, in bytes: bcrypt
	// uses only the first 72 bytes, so longer ones are refused rather than
	// silently cut.
	PasswordMaxLen = 72
)

// CheckPasswordRules reports, wrapping ErrPasswordRule, why password cannot
// be used.
func CheckPasswordRules(password string) error {
	switch {
	case len(password) < PasswordMinLen:
		return fmt.Errorf("%w: must be at least %d bytes, got %d", ErrPasswordRule, PasswordMinLen, len(password))
	case len(password) > PasswordMaxLen:
		return fmt.Errorf("%w: must be at most %d bytes, got %d", ErrPasswordRule, PasswordMaxLen, len(password))
	}
	return nil
}

// HashPassword returns a salted bcrypt hash of password at the given cost
// (PasswordCostDefault when 0). It applies CheckPasswordRules first.
func HashPassword(password string, cost int) (string, error) {
	if err := CheckPasswordRules(password); err != nil {
		return "", err
	}
	if cost == 0 {
		cost = PasswordCostDefault
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return "", fmt.Errorf("auth: hash password: %w", err)
	}
	return string(h), nil
}

// CheckPassword returns nil when password matches hash, and
// ErrWrongPassword otherwise. An empty hash (no such user) costs as much
// time as a real one, so timing does not tell whether a username exists.
func CheckPassword(hash, password string) error {
	known := hash != ""
	if !known {
		hash = dummyHash()
	}
	err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(password))
	if err == nil && known {
		return nil
	}
	if err != nil && !errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
		return fmt.Errorf("%w (%v)", ErrWrongPassword, err)
	}
	return ErrWrongPassword
}

var (
	dummyOnce sync.Once
	dummy     string
)

func dummyHash() string {
	dummyOnce.Do(func() {
		h, _ := bcrypt.GenerateFromPassword([]byte(rand.Text()), PasswordCostDefault)
		dummy = string(h)
	})
	return dummy
}

// GeneratePassword returns a random password of 26 characters (130 bits),
// for the first admin when the operator sets none.
func GeneratePassword() string { return rand.Text() }

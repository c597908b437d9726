package auth

import "errors"

var (
	// ErrWrongPassword is returned when a password does not match its hash.
	ErrWrongPassword = errors.New("auth: wrong username or password")
	// ErrPasswordRule is returned, wrapped with the rule, for a password
	// that is too short or too long.
	ErrPasswordRule = errors.New("auth: password rule")
	// ErrRateLimited is returned, wrapped with when to retry, when login
	// attempts come faster than the limiter allows.
	ErrRateLimited = errors.New("auth: too many login attempts")
)

// Package auth holds the admin's credentials and permissions, free of RPC
// types: password hashing (bcrypt), session and API tokens (random secrets
// of which only a SHA-256 hash is stored), the Principal a request runs as,
// its role and group checks, and the login rate limiter.
//
// Two kinds of secret never mix: the executor access token guards executor
// <-> admin traffic, while users' sessions and API tokens guard the
// management API.
package auth

package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Prefixes of generated secrets, so that each kind is recognizable (in a
// leaked config file, or by a secret scanner) and a session token is never
// looked up as an API token.
// A console session (ConsoleSessionPrefix) is a session set as the web
// console's cookie: the admin takes it only from that cookie.
const (
	SessionPrefix        = "carillon_s_"
	ConsoleSessionPrefix = "carillon_c_"
	APITokenPrefix       = "carillon_t_"
	ExecutorTokenPrefix  = "carillon_x_"
)

// newSecret returns prefix followed by 256 random bits.
func newSecret(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// NewSessionToken returns a new session token and the hash to store.
func NewSessionToken() (token, hash string) {
	token = newSecret(SessionPrefix)
	return token, HashToken(token)
}

// NewConsoleSessionToken returns a new session token for the web console's
// cookie, and the hash to store. Its prefix tells it from the session
// tokens a login returns, so that it is never taken as a bearer token
// (IsConsoleSession).
func NewConsoleSessionToken() (token, hash string) {
	token = newSecret(ConsoleSessionPrefix)
	return token, HashToken(token)
}

// IsConsoleSession reports whether token is a console session's, made by
// NewConsoleSessionToken.
func IsConsoleSession(token string) bool { return strings.HasPrefix(token, ConsoleSessionPrefix) }

// NewAPIToken returns a new API token and the hash to store.
func NewAPIToken() (token, hash string) {
	token = newSecret(APITokenPrefix)
	return token, HashToken(token)
}

// NewExecutorToken returns a new executor access token.
func NewExecutorToken() string { return newSecret(ExecutorTokenPrefix) }

// HashToken returns the hex SHA-256 of a token. Tokens carry 256 random
// bits, so a fast unsalted hash is enough: what the database holds cannot
// be turned back into a credential, and lookups by hash leak nothing
// useful through timing.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// KindOf returns the kind of a user credential by its prefix, and false
// for anything else (including an executor token).
func KindOf(token string) (CredentialKind, bool) {
	switch {
	case strings.HasPrefix(token, SessionPrefix), strings.HasPrefix(token, ConsoleSessionPrefix):
		return CredentialSession, true
	case strings.HasPrefix(token, APITokenPrefix):
		return CredentialAPIToken, true
	}
	return 0, false
}

// Bearer extracts the credential of an "Authorization: Bearer <token>"
// header value; the scheme is case-insensitive.
func Bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

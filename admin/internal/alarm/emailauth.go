package alarm

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/wneessen/go-mail/smtp"
)

// discoverAuth authenticates with the best mechanism the server offers
// (its EHLO's AUTH line): XOAUTH2 when a token is set, else CRAM-MD5,
// PLAIN or LOGIN, in that order. Mechanisms that send the secret itself
// (PLAIN, LOGIN, XOAUTH2) need TLS, or a server on localhost.
type discoverAuth struct {
	host, user, password, token string
	chosen                      smtp.Auth
}

// Start implements smtp.Auth.
func (a *discoverAuth) Start(s *smtp.ServerInfo) (string, []byte, error) {
	offered := func(mech string) bool { return slices.Contains(s.Auth, mech) }
	offers := strings.Join(s.Auth, " ")
	if offers == "" {
		offers = "none"
	}
	clearOK := s.TLS || s.Name == "localhost" || s.Name == "127.0.0.1" || s.Name == "::1"
	switch {
	case a.token != "" && !offered("XOAUTH2"):
		return "", nil, fmt.Errorf("an OAuth 2 token is set, but the server offers no XOAUTH2 (its AUTH: %s)", offers)
	case a.token != "" && !clearOK:
		return "", nil, errors.New("XOAUTH2 without TLS would send the token in clear")
	case a.token != "":
		a.chosen = smtp.XOAuth2Auth(a.user, a.token)
	case offered("CRAM-MD5"):
		a.chosen = smtp.CRAMMD5Auth(a.user, a.password)
	case !offered("PLAIN") && !offered("LOGIN"):
		return "", nil, fmt.Errorf("the server offers none of CRAM-MD5, PLAIN, LOGIN (its AUTH: %s)", offers)
	case !clearOK:
		return "", nil, fmt.Errorf("the server offers only %s, which without TLS would send the password in clear", offers)
	case offered("PLAIN"):
		a.chosen = smtp.PlainAuth("", a.user, a.password, a.host, false)
	default:
		a.chosen = smtp.LoginAuth(a.user, a.password, a.host, false)
	}
	return a.chosen.Start(s)
}

// Next implements smtp.Auth.
func (a *discoverAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	return a.chosen.Next(fromServer, more)
}

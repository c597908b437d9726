package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedCredentialNamesItsSource refuses a credential from each
// source: the message names the source and what to do, and login warns
// that CARILLON_API_TOKEN, when set, outranks its session.
func TestRefusedCredentialNamesItsSource(t *testing.T) {
	t.Parallel()
	url := serveAdmin(t, nil)
	b := newCLI(t)
	cfg := filepath.Join(b.home, "config.json")

	// A stale token in the environment, as the demo's export leaves it.
	b.env = []string{"CARILLON_API_TOKEN=carillon_t_stale", "CARILLON_SERVER=" + url, "CARILLON_CONFIG=" + cfg}
	code, out, errOut := b.run(testPassword+"\n", "login", "--user", "admin", "--password-stdin")
	if code != 0 || !strings.Contains(out, "logged in") ||
		!strings.Contains(errOut, "warning: CARILLON_API_TOKEN is set in your environment and takes precedence over this session; unset CARILLON_API_TOKEN") {
		t.Errorf("login with CARILLON_API_TOKEN set: exit %d, stdout %q, stderr %q; want a warning", code, out, errOut)
	}
	b.fails(exitUnauthorized, "the token in the environment variable CARILLON_API_TOKEN was refused (wrong, expired or revoked, or of another admin): "+
		"unset CARILLON_API_TOKEN to use the session carillon login saved in "+cfg, "token", "create", "walkthrough")
	b.fails(exitUnauthorized, "the token given with --api-token was refused", "whoami", "--api-token", "carillon_t_wrong")

	// Unset, the session works, and --api-token still outranks it.
	b.env = []string{"CARILLON_SERVER=" + url, "CARILLON_CONFIG=" + cfg}
	if out := b.must("", "token", "create", "walkthrough"); !strings.HasPrefix(out, "carillon_t_") {
		t.Errorf("token create with the session: %q", out)
	}
	b.fails(exitUnauthorized, "the token given with --api-token was refused", "whoami", "--api-token", "carillon_t_wrong")

	// A saved session that is no longer valid.
	if err := os.WriteFile(cfg, []byte(`{"server":"`+url+`","token":"carillon_s_ended"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b.fails(exitUnauthorized, "the session carillon login saved in "+cfg+" was refused (expired or ended): log in again: carillon login --server "+url,
		"whoami")

	// None at all.
	b.env = []string{"CARILLON_SERVER=" + url, "CARILLON_CONFIG=" + filepath.Join(b.home, "none.json")}
	b.fails(exitUnauthorized, "no credential: log in (carillon login --server "+url+" --user NAME), pass --api-token or set CARILLON_API_TOKEN", "job", "list")
	// A wrong password is the password's fault, not a credential's.
	code, _, errOut = b.run("wrong password\n", "login", "--user", "admin", "--password-stdin")
	if code != exitUnauthorized || strings.Contains(errOut, "credential") {
		t.Errorf("login with a wrong password: exit %d %q; want 3 without a word on credentials", code, errOut)
	}
}

package main

import (
	"strings"
	"testing"
)

// TestServeOIDCOptions: single sign-on's options are checked together,
// each bad one named with where it came from, and a good set prints.
func TestServeOIDCOptions(t *testing.T) {
	t.Parallel()
	b := newCLI(t)
	code, _, errOut := b.run("", "serve", "--print-config", "--oidc-issuer", "keycloak.example.com", "--oidc-member-groups", "ops=billing,dev",
		"--oidc-default-role", "member", "--oidc-scopes", "profile")
	if code != exitUsage {
		t.Fatalf("bad single sign-on options: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		`oidc-issuer: "keycloak.example.com": want an http:// or https:// URL (from flag --oidc-issuer)`,
		"oidc-client-id: required with --oidc-issuer (from default)",
		"public-url: required with --oidc-issuer",
		`oidc-member-groups: "dev": want GROUP=APP pairs`,
		`oidc-default-role: "member": want none or viewer`,
		`oidc-scopes: "profile": want openid first`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in:\n%s", want, errOut)
		}
	}
	b.fails(exitUsage, "local-login: false needs single sign-on (--oidc-issuer)", "serve", "--print-config", "--local-login=false")
	b.fails(exitUsage, "oidc-admin-groups: needs --oidc-issuer", "serve", "--print-config", "--oidc-admin-groups", "admins")

	b.env = []string{"CARILLON_OIDC_CLIENT_SECRET=s3cret", "CARILLON_LOCAL_LOGIN=false"}
	out := b.must("", "serve", "--print-config", "--oidc-issuer", "https://keycloak.example.com/realms/acme", "--oidc-client-id", "carillon",
		"--public-url", "https://carillon.example.com", "--oidc-admin-groups", "platform", "--oidc-member-groups", "ops=billing,ops=payments")
	for _, want := range []string{"oidc-client-secret", "(set)", "local-login", "env CARILLON_LOCAL_LOGIN"} {
		if !strings.Contains(out, want) {
			t.Errorf("--print-config: no %q in\n%s", want, out)
		}
	}
}

package main

import (
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/carillonhq/carillon/admin"
)

// oidcOptions are serve's single sign-on options, as given: oidc makes
// the admin's configuration of them.
type oidcOptions struct {
	issuer, clientID, clientSecret string
	scopes, groupsClaim            string
	adminGroups, memberGroups      string
	defaultRole                    string
	localLogin                     bool
}

// Values of --oidc-default-role.
const (
	oidcDefaultNone   = "none"
	oidcDefaultViewer = "viewer"
)

// define adds the single sign-on flags to fs.
func (oo *oidcOptions) define(o *serveOptions, fs *pflag.FlagSet) {
	o.str(fs, &oo.issuer, "oidc-issuer", "CARILLON_OIDC_ISSUER", "",
		"single sign-on: the OpenID Connect provider's issuer URL (https://keycloak.example.com/realms/acme, https://accounts.google.com); needs --oidc-client-id and --public-url")
	o.str(fs, &oo.clientID, "oidc-client-id", "CARILLON_OIDC_CLIENT_ID", "",
		"single sign-on: the admin's client ID at the provider, whose redirect URI is --public-url + /auth/oidc/callback")
	o.secretStr(fs, &oo.clientSecret, "oidc-client-secret", "CARILLON_OIDC_CLIENT_SECRET",
		"single sign-on: the client's secret; prefer the environment: flags show in ps")
	o.str(fs, &oo.scopes, "oidc-scopes", "CARILLON_OIDC_SCOPES", "openid,profile,email",
		"single sign-on: comma-separated scopes to ask for (add the one that puts groups in the ID token, e.g. groups)")
	o.str(fs, &oo.groupsClaim, "oidc-groups-claim", "CARILLON_OIDC_GROUPS_CLAIM", "groups",
		"single sign-on: the ID token's claim that lists the user's groups")
	o.str(fs, &oo.adminGroups, "oidc-admin-groups", "CARILLON_OIDC_ADMIN_GROUPS", "",
		"single sign-on: comma-separated provider groups whose members are ADMINs")
	o.str(fs, &oo.memberGroups, "oidc-member-groups", "CARILLON_OIDC_MEMBER_GROUPS", "",
		"single sign-on: comma-separated GROUP=APP pairs: members of the provider's GROUP are MEMBERs granted the executor group APP (a GROUP may repeat)")
	o.str(fs, &oo.defaultRole, "oidc-default-role", "CARILLON_OIDC_DEFAULT_ROLE", oidcDefaultNone,
		"single sign-on: the role of a user in none of those groups: none (refused) or viewer")
	fs.BoolVar(&oo.localLogin, "local-login", true, "sign in with passwords; false: only by single sign-on, programs with API tokens (env CARILLON_LOCAL_LOGIN)")
	o.envs["local-login"] = "CARILLON_LOCAL_LOGIN"
}

// commaList splits a comma-separated option, dropping blanks.
func commaList(s string) []string {
	items := strings.Split(s, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return slices.DeleteFunc(items, func(v string) bool { return v == "" })
}

// check returns the admin's single sign-on configuration (nil without
// --oidc-issuer), calling bad for each bad option.
func (oo *oidcOptions) check(publicURL string, bad func(name, format string, args ...any)) *admin.OIDC {
	if !oo.localLogin && oo.issuer == "" {
		bad("local-login", "false needs single sign-on (--oidc-issuer): no one could sign in")
	}
	members := map[string][]string{}
	for _, pair := range commaList(oo.memberGroups) {
		group, app, ok := strings.Cut(pair, "=")
		group, app = strings.TrimSpace(group), strings.TrimSpace(app)
		if !ok || group == "" || app == "" {
			bad("oidc-member-groups", "%q: want GROUP=APP pairs, comma-separated", pair)
			continue
		}
		members[group] = append(members[group], app)
	}
	if oo.defaultRole != oidcDefaultNone && oo.defaultRole != oidcDefaultViewer {
		bad("oidc-default-role", "%q: want none or viewer", oo.defaultRole)
	}
	if oo.issuer == "" {
		for name, v := range map[string]string{"oidc-client-id": oo.clientID, "oidc-admin-groups": oo.adminGroups, "oidc-member-groups": oo.memberGroups} {
			if v != "" {
				bad(name, "needs --oidc-issuer")
			}
		}
		return nil
	}
	if u, err := url.Parse(oo.issuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("oidc-issuer", "%q: want an http:// or https:// URL", oo.issuer)
	}
	if oo.clientID == "" {
		bad("oidc-client-id", "required with --oidc-issuer")
	}
	if publicURL == "" {
		bad("public-url", "required with --oidc-issuer: the provider sends browsers back to it")
	}
	scopes := commaList(oo.scopes)
	if len(scopes) == 0 || scopes[0] != "openid" {
		bad("oidc-scopes", "%q: want openid first", oo.scopes)
	}
	if oo.groupsClaim == "" {
		bad("oidc-groups-claim", "must not be empty")
	}
	return &admin.OIDC{Issuer: oo.issuer, ClientID: oo.clientID, ClientSecret: oo.clientSecret, PublicURL: publicURL,
		Scopes: scopes, GroupsClaim: oo.groupsClaim, AdminGroups: commaList(oo.adminGroups), MemberGroups: members,
		ViewerByDefault: oo.defaultRole == oidcDefaultViewer}
}

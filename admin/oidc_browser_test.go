package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/client"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestConsoleSSO signs in to the console by its "Sign in with SSO" button,
// through a real provider on loopback, beside the password form, as a
// VIEWER (no group of the provider maps to a role), who makes an API token
// on the Account page and calls the API with it.
func TestConsoleSSO(t *testing.T) {
	t.Parallel()
	a, idp := startSSOAdmin(t, admin.Config{OIDC: &admin.OIDC{ViewerByDefault: true}})
	b := newBrowser(t, a.URL)
	idp.QueueUser(&mockoidc.MockUser{Subject: "s-2", PreferredUsername: "mei", Email: "mei@example.com", EmailVerified: true, Groups: []string{"design"}})
	var who, token string
	b.run(t, "sign in with SSO",
		chromedp.Navigate(a.URL+"/"),
		chromedp.WaitVisible(`#sso`),
		chromedp.WaitVisible(`input[name=password]`),
		chromedp.Click(`#sso`),
		chromedp.WaitVisible(`[data-testid=whoami]`),
		chromedp.Text(`[data-testid=whoami]`, &who),
	)
	if !strings.HasPrefix(who, "mei (") {
		t.Errorf("signed in as %q, want mei", who)
	}
	b.run(t, "an API token on the Account page",
		chromedp.Navigate(a.URL+"/#/account"),
		chromedp.WaitVisible(`input[name=token_name]`),
		chromedp.SendKeys(`input[name=token_name]`, "ci"),
		chromedp.Click(`form[aria-label="new token"] button[type=submit]`),
		chromedp.WaitVisible(`[data-testid=new-token]`),
		chromedp.Text(`[data-testid=new-token]`, &token),
	)
	b.screenshot(t, "account-sso-token")
	users := carillonv1connect.NewUserServiceClient(http.DefaultClient, a.URL, client.WithToken(token))
	me, err := users.GetCurrentUser(context.Background(), &carillonv1.GetCurrentUserRequest{})
	if err != nil || me.User.Username != "mei" || me.User.Role != carillonv1.Role_ROLE_VIEWER {
		t.Errorf("the API token made on the Account page: %v (%v), want mei, a VIEWER", me, err)
	}
	b.noErrors(t)
}

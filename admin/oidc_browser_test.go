package admin_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"github.com/carillonhq/carillon/admin"
)

// TestConsoleSSO signs in to the console by its "Sign in with SSO" button,
// through a real provider on loopback, beside the password form.
func TestConsoleSSO(t *testing.T) {
	t.Parallel()
	a, idp := startSSOAdmin(t, admin.Config{})
	b := newBrowser(t, a.URL)
	idp.QueueUser(&mockoidc.MockUser{Subject: "s-2", PreferredUsername: "mei", Email: "mei@example.com", EmailVerified: true, Groups: []string{"platform"}})
	var who string
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
	b.screenshot(t, "signed-in-by-sso")
	b.noErrors(t)
}

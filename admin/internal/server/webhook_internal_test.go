package server

import "testing"

func TestWebhookAllow(t *testing.T) {
	allow, err := ParseWebhookAllow(" https://hooks.slack.com/ ,http://alerts.internal:8080/carillon")
	if err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]bool{
		"https://hooks.slack.com/services/T0/B0/x": true,
		"https://HOOKS.slack.com/x":                true,
		"https://hooks.slack.com":                  false, // path "/" is the prefix's: allowed below
		"http://hooks.slack.com/services/x":        false, // another scheme
		"https://hooks.slack.com.evil.example/x":   false, // another host
		"https://user@hooks.slack.com/x":           false, // credentials in the URL
		"http://alerts.internal:8080/carillon":     true,
		"http://alerts.internal:8080/carillon/x":   true,
		"http://alerts.internal:8080/carillonx":    false, // a longer path segment
		"http://alerts.internal/carillon":          false, // another port
		"http://127.0.0.1:8080/carillon":           false,
	} {
		if url == "https://hooks.slack.com" {
			want = true // an empty path is "/"
		}
		if got := allow.allows(url); got != want {
			t.Errorf("allows(%q) = %v, want %v", url, got, want)
		}
	}
	for _, bad := range []string{"hooks.slack.com", "ftp://x/", "https://", "https://u:p@x/", "https://x/?q=1"} {
		if _, err := ParseWebhookAllow(bad); err == nil {
			t.Errorf("ParseWebhookAllow(%q) took it", bad)
		}
	}
}

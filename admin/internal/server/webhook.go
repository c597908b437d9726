package server

import (
	"context"
	"fmt"
	"net/mail"
	"net/url"
	"strings"

	"github.com/carillonhq/carillon/admin/internal/auth"
)

// WebhookAllow is the list of URL prefixes a job's alarm webhook may start
// with when a user other than an ADMIN sets it: the admin POSTs alarms to
// that URL from its own network, so a MEMBER must not point it anywhere
// (server-side request forgery). ADMINs may set any URL.
type WebhookAllow []*url.URL

// ParseWebhookAllow parses comma-separated URL prefixes such as
// "https://hooks.slack.com/,https://alerts.internal/carillon/". Each must be
// an http or https URL with a host; a prefix matches URLs of the same scheme
// and host (and port) whose path starts with the prefix's path.
func ParseWebhookAllow(list string) (WebhookAllow, error) {
	var allow WebhookAllow
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		u, err := url.Parse(p)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("webhook allow-list: %q must be an http:// or https:// URL prefix such as https://hooks.example.com/carillon/", p)
		}
		if u.Path == "" {
			u.Path = "/"
		}
		allow = append(allow, u)
	}
	return allow, nil
}

// allows reports whether raw, an absolute URL, starts with a prefix of the list.
func (a WebhookAllow) allows(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil {
		return false
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	for _, p := range a {
		if u.Scheme == p.Scheme && strings.EqualFold(u.Host, p.Host) && strings.HasPrefix(path, p.Path) &&
			(strings.HasSuffix(p.Path, "/") || len(path) == len(p.Path) || path[len(p.Path)] == '/') {
			return true
		}
	}
	return false
}

// checkWebhook refuses a job's alarm webhook URL set by a user other than
// an ADMIN outside the allow-list. old is the URL the job had: keeping it
// is allowed, so a MEMBER can edit a job whose webhook an ADMIN set.
func (s *Server) checkWebhook(ctx context.Context, field, webhook, old string) error {
	if webhook == "" || webhook == old || auth.FromContext(ctx).Admin() || s.cfg.WebhookAllow.allows(webhook) {
		return nil
	}
	if len(s.cfg.WebhookAllow) == 0 {
		return invalid(field, "only an ADMIN may set a webhook URL: the admin has no allow-list for other users (serve --alarm-webhook-allow)")
	}
	prefixes := make([]string, len(s.cfg.WebhookAllow))
	for i, p := range s.cfg.WebhookAllow {
		prefixes[i] = p.String()
	}
	return invalid(field, "must start with one of the admin's allowed webhook prefixes (%s) unless an ADMIN sets it, got %q",
		strings.Join(prefixes, ", "), webhook)
}

// checkAlarms checks the alarm channels of a job or workflow (what names
// its request field): plain e-mail addresses, and a webhook URL that is
// an http(s) URL.
func checkAlarms(what string, emails []string, webhook string) error {
	for i, e := range emails {
		if a, err := mail.ParseAddress(e); err != nil || a.Address != e {
			return invalid(fmt.Sprintf("%s.alarm_emails[%d]", what, i), "must be a plain e-mail address such as ops@example.com, got %q", e)
		}
	}
	if webhook != "" {
		return checkURL(what+".alarm_webhook_url", webhook)
	}
	return nil
}

package alarm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// WebhookTimeoutDefault bounds one webhook POST.
const WebhookTimeoutDefault = 10 * time.Second

// Webhook POSTs each event as JSON to URL (the admin's global webhook) and
// to the event's own WebhookURL (the job's), if set. Any 2xx answer is
// success.
type Webhook struct {
	// URL is the global webhook; empty sends only to per-job webhooks.
	URL string
	// Client defaults to a client with a WebhookTimeoutDefault timeout.
	Client *http.Client
}

// Send implements Alarm.
func (w *Webhook) Send(ctx context.Context, e Event) error {
	var urls []string
	for _, u := range []string{w.URL, e.WebhookURL} {
		if u != "" && (len(urls) == 0 || urls[0] != u) {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		return ErrNoRecipient
	}
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	client := cmp.Or(w.Client, &http.Client{Timeout: WebhookTimeoutDefault})
	for _, u := range urls {
		if err := post(ctx, client, u, body); err != nil {
			return err
		}
	}
	return nil
}

func post(ctx context.Context, client *http.Client, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("webhook %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "carillon-alarm")
	res, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook %s: %w", url, err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("webhook %s: answered %s", url, res.Status)
	}
	return nil
}

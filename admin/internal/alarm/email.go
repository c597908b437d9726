package alarm

import (
	"bytes"
	"context"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"strings"
	"time"
)

// Email sends each event to the job's alarm e-mail addresses through an
// SMTP server.
type Email struct {
	// Addr is the SMTP server, host:port. Required.
	Addr string
	// From is the sender address. Required.
	From string
	// Username and Password, if set, authenticate with PLAIN auth (which
	// net/smtp only allows over TLS or to localhost).
	Username, Password string
}

// Send implements Alarm.
func (m *Email) Send(ctx context.Context, e Event) error {
	if len(e.Emails) == 0 {
		return ErrNoRecipient
	}
	var auth smtp.Auth
	if m.Username != "" {
		host, _, _ := net.SplitHostPort(m.Addr)
		auth = smtp.PlainAuth("", m.Username, m.Password, host)
	}
	msg := m.message(e)
	// net/smtp takes no context: run it aside and stop waiting when ctx ends.
	done := make(chan error, 1)
	go func() { done <- smtp.SendMail(m.Addr, auth, m.From, e.Emails, msg) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("email via %s: %w", m.Addr, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("email via %s: %w", m.Addr, ctx.Err())
	}
}

func (m *Email) message(e Event) []byte {
	subject := fmt.Sprintf("[carillon] job %d %q: run %d %s", e.JobID, e.JobDescription, e.RunID, e.Status)
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\n", m.From)
	fmt.Fprintf(&b, "To: %s\r\n", strings.Join(e.Emails, ", "))
	fmt.Fprintf(&b, "Subject: %s\r\n", mime.QEncoding.Encode("utf-8", subject))
	fmt.Fprintf(&b, "Date: %s\r\n", time.Now().Format(time.RFC1123Z))
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n")
	fmt.Fprintf(&b, "Job:       %d %s (owner %s)\r\n", e.JobID, e.JobDescription, e.Owner)
	fmt.Fprintf(&b, "Run:       %d, attempt %d of %d, %s\r\n", e.RunID, e.Attempt+1, e.RetryCount+1, e.TriggerType)
	fmt.Fprintf(&b, "Status:    %s\r\n", e.Status)
	fmt.Fprintf(&b, "Executor:  %s\r\n", e.ExecutorAddress)
	fmt.Fprintf(&b, "Scheduled: %s\r\n", e.ScheduledAt.Format(time.RFC3339))
	fmt.Fprintf(&b, "Finished:  %s\r\n\r\n", e.FinishedAt.Format(time.RFC3339))
	b.WriteString(strings.ReplaceAll(e.Message, "\n", "\r\n"))
	b.WriteString("\r\n")
	return b.Bytes()
}

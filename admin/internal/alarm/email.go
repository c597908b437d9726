package alarm

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	mail "github.com/wneessen/go-mail"
)

// Email sends each event to the job's alarm e-mail addresses through an
// SMTP server, with go-mail: every step (dial, TLS, AUTH, the message)
// ends when Send's context does.
type Email struct {
	// Addr is the SMTP server, host:port. Required.
	Addr string
	// From is the sender address. Required.
	From string
	// TLS is how the connection is secured. Defaults to TLSStartTLS.
	TLS TLSMode
	// TLSConfig, if set, is the TLS configuration (e.g. the CAs to trust;
	// the system's by default). Its ServerName defaults to Addr's host.
	TLSConfig *tls.Config
	// Username, if set, authenticates with Password (by CRAM-MD5, PLAIN
	// or LOGIN, as the server offers) or with OAuth2Token.
	Username, Password string
	// OAuth2Token, if set, authenticates Username by XOAUTH2 instead of
	// the password.
	OAuth2Token string
}

// stepTimeoutDefault bounds each step of a Send whose context has no
// deadline.
const stepTimeoutDefault = SendTimeoutDefault

// Send implements Alarm. A server that stalls holds it until ctx ends,
// no longer: the error then says it timed out (or was cancelled), and
// Send has closed the connection.
func (m *Email) Send(ctx context.Context, e Event) error {
	if len(e.Emails) == 0 {
		return ErrNoRecipient
	}
	msg, err := m.message(e)
	if err != nil {
		return fmt.Errorf("email: %w", err)
	}
	start := time.Now()
	err = m.send(ctx, msg)
	// go-mail's own deadline on each step is ctx's: its i/o timeout may
	// come a moment before ctx says it is done.
	dl, ok := ctx.Deadline()
	switch {
	case err == nil:
		return nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded), ok && !time.Now().Before(dl):
		return fmt.Errorf("email via %s: timed out after %s: %w", m.Addr, time.Since(start).Round(100*time.Millisecond), err)
	case ctx.Err() != nil:
		return fmt.Errorf("email via %s: cancelled: %w", m.Addr, err)
	}
	return fmt.Errorf("email via %s: %w", m.Addr, err)
}

// send delivers msg over one connection, closed when it returns.
func (m *Email) send(ctx context.Context, msg *mail.Msg) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	host, portText, err := net.SplitHostPort(m.Addr)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("port %q: %w", portText, err)
	}
	mode := m.TLS
	if mode == "" {
		mode = TLSStartTLS
	}
	tlsConf := &tls.Config{}
	if m.TLSConfig != nil {
		tlsConf = m.TLSConfig.Clone()
	}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = host
	}
	tlsConf.MinVersion = max(tlsConf.MinVersion, tls.VersionTLS12)

	// The connection is ours, not go-mail's: closed when ctx ends, which
	// ends whatever step waits on it, and when send returns, whatever
	// step failed.
	var conn net.Conn
	stop := func() bool { return false }
	defer func() {
		stop()
		if conn != nil {
			_ = conn.Close() // after QUIT, already closed
		}
	}()
	dial := func(dctx context.Context, network, _ string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(dctx, network, m.Addr)
		if err != nil {
			return nil, err
		}
		conn, stop = c, context.AfterFunc(ctx, func() { _ = c.Close() })
		if mode != TLSImplicit {
			return c, nil
		}
		tc := tls.Client(c, tlsConf)
		if err := tc.HandshakeContext(dctx); err != nil {
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		return tc, nil
	}
	step := stepTimeoutDefault
	if dl, ok := ctx.Deadline(); ok {
		step = max(time.Until(dl), time.Millisecond)
	}
	opts := []mail.Option{
		mail.WithPort(port), mail.WithTimeout(step), mail.WithDialContextFunc(dial),
		mail.WithTLSConfig(tlsConf), mail.WithTLSPolicy(mode.policy()),
	}
	if mode == TLSImplicit {
		opts = append(opts, mail.WithSSL()) // the dial did the TLS; no STARTTLS
	}
	if m.Username != "" {
		opts = append(opts, mail.WithSMTPAuthCustom(&discoverAuth{host: host, user: m.Username, password: m.Password, token: m.OAuth2Token}))
	}
	client, err := mail.NewClient(host, opts...)
	if err != nil {
		return err
	}
	return client.DialAndSendWithContext(ctx, msg)
}

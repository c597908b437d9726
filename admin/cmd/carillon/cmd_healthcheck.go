package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/carillonhq/carillon/admin"
)

// healthcheckCmd is "carillon healthcheck": it asks the admin on this host
// whether it is ready (GET /readyz; /healthz with --live) and exits 0 when
// it answers 200, 1 otherwise, saying why: a container's HEALTHCHECK on a
// distroless image, which has no curl.
func healthcheckCmd(e *cmdEnv) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "healthcheck [--live] [--url URL]",
		Short: "Exit 0 when the admin on this host is ready (for a container's HEALTHCHECK)",
		Long: `Ask the admin on this host whether it is ready: GET /readyz (with --live,
/healthz: whether the process serves) on the address of CARILLON_LISTEN (else
` + admin.ListenDefault + `), over https when CARILLON_TLS_CERT is set, or on --url.
Exit 0 when it answers 200; otherwise exit 1 and print why. It sends no
credential, and trusts any certificate of that local address: it reads only
a status.`,
		Example: "  carillon healthcheck\n  HEALTHCHECK CMD [\"/usr/local/bin/carillon\", \"healthcheck\"]",
		Args:    exactArgs(0, "no arguments"),
	}
	// No client flags: its help shows its own only.
	cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), "{{if .HasAvailableInheritedFlags}}", "{{if false}}", 1))
	fs := cmd.Flags()
	live := fs.Bool("live", false, "ask /healthz (the process serves) instead of /readyz (it schedules and its database takes writes)")
	url := fs.String("url", "", "the URL to GET (default: http://127.0.0.1:PORT/readyz, PORT of CARILLON_LISTEN)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		e.ran = true
		target := *url
		if target == "" {
			var err error
			if target, err = localURL(e.proc.getenv("CARILLON_LISTEN"), e.proc.getenv("CARILLON_TLS_CERT") != "", *live); err != nil {
				return err
			}
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), *timeout)
		defer cancel()
		return healthcheck(ctx, target, e.io.out)
	}
	return cmd
}

// localURL is the URL of the health endpoint of the admin listening on
// listen (admin.ListenDefault when empty), dialled on loopback when it
// listens on every interface.
func localURL(listen string, tls, live bool) (string, error) {
	if listen == "" {
		listen = admin.ListenDefault
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", usagef("healthcheck: CARILLON_LISTEN %q: %v", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	scheme, path := "http", "/readyz"
	if tls {
		scheme = "https"
	}
	if live {
		path = "/healthz"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + path, nil
}

// healthcheck GETs url and returns nil when it answers 200, else an error
// with the answer or the failure; the answer goes to out.
func healthcheck(ctx context.Context, url string, out io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil) //nolint:gosec // the URL of the person's own --url or CARILLON_LISTEN
	if err != nil {
		return usagef("healthcheck: --url: %v", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// The admin on this host: the check reads a status, sends nothing
	// secret, and the certificate rarely names 127.0.0.1.
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see above
	res, err := (&http.Client{Transport: tr}).Do(req)          //nolint:gosec // as above
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	msg := strings.TrimSpace(string(body))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s: %s: %s", url, res.Status, msg)
	}
	_, err = fmt.Fprintln(out, msg)
	return err
}

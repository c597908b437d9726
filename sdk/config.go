package sdk

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"connectrpc.com/connect"
)

// Defaults of the optional [Config] fields.
const (
	// ListenDefault is the default [Config].Listen: port 9999 on every
	// interface, so that an admin on another host can call the executor.
	ListenDefault = ":9999"

	// HeartbeatIntervalDefault is the default [Config].HeartbeatInterval.
	// The admin drops an executor it has not heard from for 90 s.
	HeartbeatIntervalDefault = 30 * time.Second

	// ShutdownTimeoutDefault is the default [Config].ShutdownTimeout.
	ShutdownTimeoutDefault = 10 * time.Second

	// LogRetentionDefault is the default [Config].LogRetention: 30 days.
	LogRetentionDefault = 30 * 24 * time.Hour

	// AppNameMaxLen is the longest [Config].AppName accepted.
	AppNameMaxLen = 64
)

// Config configures an [Executor]. AdminURLs and AppName are required; the
// zero value of every other field is a valid default. [New] copies the
// Config, so changing it afterwards has no effect.
type Config struct {
	// AdminURLs are the base URLs of the admin servers, for example
	// "http://10.0.0.2:8080". Calls go to the first one that answers, in
	// order, so list the nearest first. Required: at least one http or https
	// URL.
	AdminURLs []string

	// AppName names the executor group this executor belongs to: the admin
	// routes a job to the live executors registered under the job's group's
	// app name. Required: 1 to 64 letters, digits, '.', '_' or '-'.
	AppName string

	// AccessToken is the secret shared with the admin. When set, every call
	// to the admin carries "Authorization: Bearer <AccessToken>", and every
	// call from the admin must carry the same header or is refused as
	// unauthenticated. Defaults to "": no authentication in either
	// direction, so anyone who can reach Listen can run this executor's
	// handlers. Set it in production; it is required when ScriptsEnabled is
	// set.
	AccessToken string

	// Listen is the TCP address [Executor.Run] listens on, in the form
	// "host:port". Defaults to [ListenDefault] (":9999", all interfaces).
	// [Executor.Serve] takes a listener instead and ignores it.
	Listen string

	// AdvertiseURL is the base URL the admin calls this executor back on,
	// as it must be written from the admin's side: set it when the executor
	// runs behind NAT, in a container or behind a proxy. Defaults to
	// "http://<host>:<port>" from the listener's address; when the listener
	// is on an unspecified address (":9999", "0.0.0.0:9999" or "[::]:9999")
	// <host> is the first non-loopback IPv4 address of this host, or
	// 127.0.0.1 when it has none.
	AdvertiseURL string

	// HeartbeatInterval is how often the executor registers again with the
	// admin; registering is the heartbeat. Defaults to
	// [HeartbeatIntervalDefault] (30 seconds).
	HeartbeatInterval time.Duration

	// ShutdownTimeout is how long a stopping executor waits for running runs
	// to finish before it cancels them (with [ErrShuttingDown]) and reports
	// them KILLED; flushing unreported results to the admin gets the same
	// time again. Defaults to [ShutdownTimeoutDefault] (10 seconds).
	ShutdownTimeout time.Duration

	// LogDir is the directory for run logs (see "Logs" in the package
	// documentation) and for results the admin has not acknowledged yet,
	// which survive a restart there. Give each executor process its own
	// LogDir and keep it across restarts. Runs, logs and results are kept
	// apart by the admin database they belong to, so an executor that ran
	// against one database serves a new one (whose run ids start at 1
	// again) with the same LogDir. Defaults to carillon/<AppName> under [os.UserCacheDir] (for
	// example ~/.cache/carillon/<AppName>), or under [os.TempDir] when the
	// user has no cache directory.
	LogDir string

	// LogRetention is how long run logs are kept; older ones are deleted,
	// a whole day at a time. Defaults to [LogRetentionDefault] (30 days).
	// A negative value keeps logs forever.
	LogRetention time.Duration

	// ScriptsEnabled lets the executor run script jobs (shell, Python,
	// Node.js, PHP and PowerShell source sent by the admin). That is remote
	// code execution by design: whoever holds the AccessToken can run any
	// program as this process's user, so it needs an AccessToken. Defaults
	// to false: script runs are reported FAILED with [ErrScriptsDisabled].
	ScriptsEnabled bool

	// Logger receives the executor's own log (registration, delivery
	// problems, abandoned handlers); run logs go to files under LogDir.
	// Defaults to [slog.Default].
	Logger *slog.Logger

	// HTTPClient makes the calls to the admin. Defaults to a client that
	// speaks HTTP/1.1, and HTTP/2 over TLS; pass a client with
	// http.Protocols.SetUnencryptedHTTP2 for h2c. Each call is bounded by
	// its own timeout of 10 seconds. For an https admin whose certificate a
	// private CA signed, pass a client whose transport's
	// TLSClientConfig.RootCAs holds that CA (or set SSL_CERT_FILE).
	HTTPClient *http.Client

	// NowFunc returns the current time: for result and log timestamps, the
	// log directory's day and log retention. Defaults to [time.Now].
	NowFunc func() time.Time

	// Interceptors are extra Connect interceptors on the ExecutorService
	// the admin calls, outermost first, outside the access token's check:
	// for example [github.com/carillonhq/carillon/sdk/sdkotel]'s server
	// spans. Defaults to none.
	Interceptors []connect.Interceptor
}

// withDefaults returns a copy of c with every zero optional field set.
func (c Config) withDefaults() Config {
	c.AdminURLs = append([]string(nil), c.AdminURLs...)
	c.Interceptors = append([]connect.Interceptor(nil), c.Interceptors...)
	c.Listen = cmp.Or(c.Listen, ListenDefault)
	c.HeartbeatInterval = cmp.Or(c.HeartbeatInterval, HeartbeatIntervalDefault)
	c.ShutdownTimeout = cmp.Or(c.ShutdownTimeout, ShutdownTimeoutDefault)
	c.LogRetention = cmp.Or(c.LogRetention, LogRetentionDefault)
	if c.LogDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		c.LogDir = filepath.Join(base, "carillon", c.AppName)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.HTTPClient == nil {
		c.HTTPClient = newHTTPClient()
	}
	if c.NowFunc == nil {
		c.NowFunc = time.Now
	}
	return c
}

// validate names the first field that is wrong and says why.
func (c *Config) validate() error {
	if len(c.AdminURLs) == 0 {
		return fmt.Errorf("%w: AdminURLs is required", ErrInvalidConfig)
	}
	for i, u := range c.AdminURLs {
		if err := checkBaseURL(u); err != nil {
			return fmt.Errorf("%w: AdminURLs[%d] %q: %v", ErrInvalidConfig, i, u, err)
		}
	}
	if c.AppName == "" {
		return fmt.Errorf("%w: AppName is required", ErrInvalidConfig)
	}
	if !validAppName(c.AppName) {
		return fmt.Errorf("%w: AppName %q: want 1 to %d letters, digits, '.', '_' or '-'",
			ErrInvalidConfig, c.AppName, AppNameMaxLen)
	}
	if c.AdvertiseURL != "" {
		if err := checkBaseURL(c.AdvertiseURL); err != nil {
			return fmt.Errorf("%w: AdvertiseURL %q: %v", ErrInvalidConfig, c.AdvertiseURL, err)
		}
	}
	if c.HeartbeatInterval < 0 {
		return fmt.Errorf("%w: HeartbeatInterval %v: must not be negative", ErrInvalidConfig, c.HeartbeatInterval)
	}
	if c.ShutdownTimeout < 0 {
		return fmt.Errorf("%w: ShutdownTimeout %v: must not be negative", ErrInvalidConfig, c.ShutdownTimeout)
	}
	if c.ScriptsEnabled && c.AccessToken == "" {
		return fmt.Errorf("%w: ScriptsEnabled needs an AccessToken: without one, anyone who can reach the executor can run programs on it", ErrInvalidConfig)
	}
	return nil
}

func validAppName(s string) bool {
	if len(s) == 0 || len(s) > AppNameMaxLen {
		return false
	}
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

// checkBaseURL accepts absolute http and https URLs with a host.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme must be http or https")
	}
	if u.Host == "" {
		return fmt.Errorf("host is missing")
	}
	return nil
}

// newHTTPClient is the default Config.HTTPClient.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 4
	return &http.Client{Transport: t}
}

package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/carillonhq/carillon/admin/client"
)

// serverDefault is the admin client commands call when nothing names one.
const serverDefault = "http://127.0.0.1:8080"

// envAPIToken is the environment variable of a client command's token.
const envAPIToken = "CARILLON_API_TOKEN" //nolint:gosec // the name of an environment variable, not a credential

// cmdEnv is what a client command works with: its streams, the global
// flags and, once load has run, the admin's address, the credential and
// where it came from.
type cmdEnv struct {
	io       stdio
	proc     procEnv              // the environment variables and working directory
	ran      bool                 // a command's RunE was called: later errors are not cobra's
	terminal func(io.Writer) bool // whether a stream is a terminal: isTerminal, but in tests

	flags                             *pflag.FlagSet // the global flags
	server, token, configPath, caFile string
	json                              bool

	tokenFrom  string // where token came from, for the person: "--api-token", ...
	configFile string // the config file's path
	config     config // as read from configFile
	http       *http.Client
}

// globalFlags defines the flags every client command takes, before or
// after the command's name. None has a default read from the
// environment, so that no secret shows in --help: load reads it.
func (e *cmdEnv) globalFlags(root *cobra.Command) {
	fs := root.PersistentFlags()
	e.flags = fs
	fs.StringVar(&e.server, "server", "", "the admin's URL (env CARILLON_SERVER; else the config file's; else "+serverDefault+")")
	fs.StringVar(&e.token, "api-token", "", "a session or API token (env "+envAPIToken+"; else the session carillon login saved, for its server)")
	fs.StringVar(&e.configPath, "config", "", "the file carillon login writes (env CARILLON_CONFIG; default <user config dir>/carillon/config.json)")
	fs.StringVar(&e.caFile, "ca-file", "",
		"PEM file of CA certificates to trust, besides the system's, for an https admin (env CARILLON_CA_FILE; else the config file's, for its server)")
	fs.BoolVar(&e.json, "json", false, "print the API's JSON instead of a table")
	_ = root.MarkPersistentFlagFilename("config", "json")
	_ = root.MarkPersistentFlagFilename("ca-file", "pem", "crt")
}

// fromEnv sets *v from the environment variable when the flag was not
// given, and tells whether it did.
func (e *cmdEnv) fromEnv(v *string, flag, env string) bool {
	if e.flags.Changed(flag) {
		return false
	}
	s, ok := e.proc.lookup(env)
	if ok {
		*v = s
	}
	return ok && s != ""
}

// leaf makes cmd a client command: its RunE loads the configuration,
// then runs f, and explains a refused credential or certificate.
func (e *cmdEnv) leaf(cmd *cobra.Command, f func(ctx context.Context, args []string) error) *cobra.Command {
	cmd.RunE = func(c *cobra.Command, args []string) error {
		e.ran = true
		if err := e.load(); err != nil {
			return err
		}
		return e.explainTLS(e.explainCredential(f(c.Context(), args)))
	}
	return cmd
}

// config is the file login writes: the server, a session token for it and
// the CA file it was logged in to with.
type config struct {
	Server string `json:"server"`
	Token  string `json:"token,omitempty"`
	CAFile string `json:"caFile,omitempty"`
}

// load reads the config file, if any, and settles the server, token and CA
// file: flags first, then the environment, then the file (whose token and
// CA file are used only for the file's own server, so the token is never
// sent elsewhere).
func (e *cmdEnv) load() error {
	e.fromEnv(&e.configPath, "config", "CARILLON_CONFIG")
	e.configFile = e.configPath
	if e.configFile == "" {
		dir, err := e.proc.userConfigDir()
		if err != nil {
			return fmt.Errorf("config file: %w (set --config or CARILLON_CONFIG)", err)
		}
		e.configFile = filepath.Join(dir, "carillon", "config.json")
	}
	b, err := os.ReadFile(e.proc.path(e.configFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("config file: %w", err)
	default:
		if err := json.Unmarshal(b, &e.config); err != nil {
			return fmt.Errorf("config file %s: %w", e.configFile, err)
		}
	}
	fromEnv := e.fromEnv(&e.server, "server", "CARILLON_SERVER")
	if err := checkServerURL(e.server, fromEnv); err != nil {
		return err
	}
	e.server = strings.TrimRight(cmp.Or(e.server, e.config.Server, serverDefault), "/")
	e.fromEnv(&e.caFile, "ca-file", "CARILLON_CA_FILE")
	switch {
	case e.token != "":
		e.tokenFrom = "--api-token"
	case e.fromEnv(&e.token, "api-token", envAPIToken):
		e.tokenFrom = "env"
	case e.config.Server == e.server && e.config.Token != "":
		e.token, e.tokenFrom = e.config.Token, "session"
	}
	if e.config.Server == e.server {
		e.caFile = cmp.Or(e.caFile, e.config.CAFile)
	}
	e.http = &http.Client{Timeout: 2 * time.Minute}
	if e.caFile != "" {
		tc, err := trustCAFile(e.caFile, e.proc.path(e.caFile))
		if err != nil {
			return fmt.Errorf("CA file: %w", err)
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = tc
		e.http.Transport = t
	}
	return nil
}

// clients returns the management clients, sending the settled token.
func (e *cmdEnv) clients() *client.Clients {
	return client.New(e.http, e.server, client.WithToken(e.token))
}

// anonymous returns the management clients without a credential, for
// Login.
func (e *cmdEnv) anonymous() *client.Clients {
	e.token, e.tokenFrom = "", "none"
	return client.New(e.http, e.server)
}

// explainCredential adds to an unauthenticated error which credential was
// refused, where it came from and what to do.
func (e *cmdEnv) explainCredential(err error) error {
	if connect.CodeOf(err) != connect.CodeUnauthenticated || e.tokenFrom == "none" {
		return err
	}
	session := ""
	if e.config.Server == e.server && e.config.Token != "" {
		session = " to use the session carillon login saved in " + e.configFile
	}
	var hint string
	switch e.tokenFrom {
	case "--api-token":
		hint = "the token given with --api-token was refused (wrong, expired or revoked)"
	case "env":
		hint = "the token in the environment variable " + envAPIToken + " was refused (wrong, expired or revoked, or of another admin): " +
			"unset " + envAPIToken + session + ", or set it to a valid token"
		if session == "" {
			hint += "; or unset it and log in again: carillon login --server " + e.server + " --user NAME"
		}
	case "session":
		hint = "the session carillon login saved in " + e.configFile + " was refused (expired or ended): log in again: carillon login --server " +
			e.server + " --user NAME"
	default:
		hint = "no credential: log in (carillon login --server " + e.server + " --user NAME), pass --api-token or set " + envAPIToken
	}
	var ce *connect.Error
	errors.As(err, &ce)
	return connect.NewError(ce.Code(), fmt.Errorf("%s; %s", ce.Message(), hint))
}

// trustCAFile returns a TLS configuration trusting the CA certificates in
// the PEM file name, at path, besides the system's roots.
func trustCAFile(name, path string) (*tls.Config, error) {
	b, err := os.ReadFile(path) //nolint:gosec // the person's own file, named on the command line
	if err != nil {
		return nil, err
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", name)
	}
	return &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

// explainTLS adds to err, when the admin's certificate failed
// verification, what the person can do about it.
func (e *cmdEnv) explainTLS(err error) error {
	var (
		unknown x509.UnknownAuthorityError
		hint    string
	)
	switch {
	case errors.As(err, &unknown) && e.caFile != "":
		hint = "the admin's certificate is not signed by a CA in " + e.caFile
	case errors.As(err, &unknown):
		hint = "the admin's certificate is not signed by a CA this system trusts: " +
			"pass the CA's certificate (PEM) with --ca-file or CARILLON_CA_FILE"
	default:
		return err
	}
	code, cause := connect.CodeUnavailable, err
	if ce := new(connect.Error); errors.As(err, &ce) {
		code, cause = ce.Code(), ce.Unwrap()
	}
	return connect.NewError(code, fmt.Errorf("%w; %s", cause, hint))
}

// saveConfig writes c to the config file, readable by its owner only.
func (e *cmdEnv) saveConfig(c config) error {
	path := e.proc.path(e.configFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	return nil
}

// checkServerURL refuses an admin address without its scheme
// ("127.0.0.1:8080"), which Go would read as a URL of scheme "127.0.0.1",
// as a usage error saying what to write. fromEnv tells that it came from
// CARILLON_SERVER rather than --server.
func checkServerURL(server string, fromEnv bool) error {
	if server == "" {
		return nil
	}
	name := "--server"
	if fromEnv {
		name = "CARILLON_SERVER"
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		hint := ""
		if !strings.Contains(server, "://") {
			hint = fmt.Sprintf(": write its scheme, http://%s (or https:// for an admin serving TLS)", server)
		}
		return usagef("%s %q: want the admin's URL, http://HOST:PORT or https://HOST:PORT%s", name, server, hint)
	}
	return nil
}

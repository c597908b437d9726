package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/alarm"
	"github.com/carillonhq/carillon/admin/internal/retention"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/server"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/tracing"
	"github.com/carillonhq/carillon/admin/internal/trigger"
)

// demoDBPath is the database of --demo unless --db says otherwise.
const demoDBPath = "carillon-demo.db"

// serveOptions are serve's settings: the flags of the command, and the
// options without a flag (secrets kept out of ps), all of which the
// environment and the config file may set too.
type serveOptions struct {
	cfg       admin.Config
	logLevel  string
	logFormat string
	flags     *pflag.FlagSet // the command's flags
	extra     *pflag.FlagSet // options without a flag
	envs      map[string]string
	secret    map[string]bool
	sources   map[string]string // by option name, once layered
	print     bool
	file      string
	fileLines map[string]int
	terminal  func(io.Writer) bool // whether stderr is a terminal
	proc      procEnv              // the environment variables and working directory
	oidc      oidcOptions          // single sign-on's, made into cfg.OIDC by validate
}

// option names of serve that are not flags: the environment or the config
// file only.
const (
	optSMTPPassword    = "smtp-password"
	optSMTPOAuth2Token = "smtp-oauth2-token" //nolint:gosec // the option's name, not a token
)

func serveCmd(e *cmdEnv) *cobra.Command {
	o := &serveOptions{envs: map[string]string{}, secret: map[string]bool{}, terminal: e.terminal, proc: e.proc}
	if o.terminal == nil {
		o.terminal = isTerminal
	}
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Run the admin: the scheduler, the API and the web console on one port",
		Long: `Run the admin: the scheduler, the Connect API (also gRPC and gRPC-Web) and the
web console, on one port, over the SQLite database --db (created if missing).

Each option is taken from, in this order: its flag, its environment variable
(named in its help), the config file (--config-file, lines "name = value" with
the flags' names, smtp-password and smtp-oauth2-token), its default.
--print-config prints every option with its value and where it came from, and
exits.

On its first start on a database the admin creates the user "admin" with
--admin-password or a generated password, printed once, and an executor
access token, kept in the database (carillon executor-token prints it).`,
		Example: "  carillon serve\n  carillon serve --demo\n  carillon serve --config-file /etc/carillon/admin.conf --print-config",
		Args:    exactArgs(0, "no arguments: carillon serve [flags]"),
	}
	// No client flags: serve's help shows its own only.
	cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), "{{if .HasAvailableInheritedFlags}}", "{{if false}}", 1))
	fs := cmd.Flags()
	o.flags = fs
	o.extra = pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c := &o.cfg
	o.str(fs, &c.Listen, "listen", "CARILLON_LISTEN", admin.ListenDefault, "address to serve the API on")
	o.str(fs, &c.DBPath, "db", "CARILLON_DB", admin.DBPathDefault, "SQLite database file, created if missing ("+demoDBPath+" with --demo), or a postgres:// URL of a database several admins share")
	o.secretStr(fs, &c.Token, "token", "CARILLON_TOKEN",
		"executor access token (default: the one generated on first start and kept in the database)")
	o.boolean(fs, &c.Insecure, "insecure", "CARILLON_INSECURE",
		"run without an executor access token when --token is empty: anyone may register executors")
	o.secretStr(fs, &c.AdminPassword, "admin-password", "CARILLON_ADMIN_PASSWORD",
		"password of the first ADMIN \"admin\", created on first start (default: generated and printed once); prefer the environment: flags show in ps")
	o.str(fs, &c.TLSCert, "tls-cert", "CARILLON_TLS_CERT", "", "PEM certificate file: serve HTTPS instead of cleartext")
	o.str(fs, &c.TLSKey, "tls-key", "CARILLON_TLS_KEY", "", "PEM private key file of --tls-cert")
	o.str(fs, &c.ExecutorCAFile, "executor-ca-file", "CARILLON_EXECUTOR_CA_FILE", "",
		"PEM file of CA certificates to trust, besides the system's, for executors served over https")
	fs.DurationVar(&c.MisfireThreshold, "misfire-threshold", schedule.MisfireThresholdDefault,
		"how late a fire may be before the job's misfire strategy handles it (env CARILLON_MISFIRE_THRESHOLD)")
	o.envs["misfire-threshold"] = "CARILLON_MISFIRE_THRESHOLD"
	fs.DurationVar(&c.LeaseDuration, "lease-duration", store.LeaseDuration,
		"over PostgreSQL, how long this admin's lease holds after each renewal (every quarter of it): longer rides out stalls of a busy machine, "+
			"but a dead admin's fires go on only once its lease ran out (env CARILLON_LEASE_DURATION)")
	o.envs["lease-duration"] = "CARILLON_LEASE_DURATION"
	fs.Int64Var(&c.FiresPerAdmin, "fires-per-admin", store.FiresPerAdminDefault,
		"over PostgreSQL, how many fires a second one admin takes before another live admin shares them; the others stand by. "+
			"0: every live admin shares them. Give every admin the same (env CARILLON_FIRES_PER_ADMIN)")
	o.envs["fires-per-admin"] = "CARILLON_FIRES_PER_ADMIN"
	fs.DurationVar(&c.SendAhead, "send-ahead", trigger.SendAheadDefault,
		"how long before its instant a scheduled run is sent to executors that start runs on their instant themselves (the Go SDK); negative: every run on its instant (env CARILLON_SEND_AHEAD)")
	o.envs["send-ahead"] = "CARILLON_SEND_AHEAD"
	fs.IntVar(&c.RetentionDays, "retention-days", retention.DaysDefault, "days of runs (and of ended workflow runs) to keep; -1 keeps all (env CARILLON_RETENTION_DAYS)")
	o.envs["retention-days"] = "CARILLON_RETENTION_DAYS"
	o.str(fs, &c.PublicURL, "public-url", "CARILLON_PUBLIC_URL", "",
		"the admin's URL as its users reach it (https://carillon.example.com, behind a proxy perhaps): alarms link to their run's page there")
	o.oidc.define(o, fs)
	o.str(fs, &c.AlarmWebhook, "alarm-webhook", "CARILLON_ALARM_WEBHOOK", "", "URL that receives every alarm as a POST in --alarm-webhook-format")
	o.str(fs, &c.AlarmWebhookFormat, "alarm-webhook-format", "CARILLON_ALARM_WEBHOOK_FORMAT", "json",
		"what --alarm-webhook receives: json (Carillon's JSON), dingtalk, feishu, wecom, slack (each robot's message) or template (--alarm-webhook-template)")
	o.secretStr(fs, &c.AlarmWebhookSecret, "alarm-webhook-secret", "CARILLON_ALARM_WEBHOOK_SECRET",
		"key that signs what --alarm-webhook receives (dingtalk, feishu: as they document; json, template: an X-Carillon-Signature header); prefer the environment: flags show in ps")
	o.str(fs, &c.AlarmWebhookTemplate, "alarm-webhook-template", "CARILLON_ALARM_WEBHOOK_TEMPLATE", "",
		"with --alarm-webhook-format template: the Go text/template over the alarm that --alarm-webhook receives, e.g. '{\"text\": {{json .Message}}}'")
	o.str(fs, &c.AlarmWebhookAllow, "alarm-webhook-allow", "CARILLON_ALARM_WEBHOOK_ALLOW", "",
		"comma-separated URL prefixes that users other than ADMINs may set as a job's alarm webhook (default: only ADMINs set webhooks)")
	o.str(fs, &c.SMTP.Addr, "smtp-addr", "CARILLON_SMTP_ADDR", "", "SMTP server host:port for alarm e-mails")
	o.str(fs, &c.SMTP.From, "smtp-from", "CARILLON_SMTP_FROM", "", "sender address of alarm e-mails")
	o.str(fs, &c.SMTP.Username, "smtp-username", "CARILLON_SMTP_USERNAME", "",
		"SMTP user name (the password: CARILLON_SMTP_PASSWORD or smtp-password in the config file, never a flag; or an OAuth 2 token for XOAUTH2: CARILLON_SMTP_OAUTH2_TOKEN or smtp-oauth2-token)")
	o.secretStr(o.extra, &c.SMTP.Password, optSMTPPassword, "CARILLON_SMTP_PASSWORD", "SMTP password")
	o.secretStr(o.extra, &c.SMTP.OAuth2Token, optSMTPOAuth2Token, "CARILLON_SMTP_OAUTH2_TOKEN", "OAuth 2 access token of --smtp-username: XOAUTH2 instead of the password")
	o.str(fs, (*string)(&c.SMTP.TLS), "smtp-tls", "CARILLON_SMTP_TLS", string(alarm.TLSStartTLS),
		"how alarm e-mails are secured: starttls (STARTTLS, required), opportunistic (STARTTLS when offered), implicit (TLS from the first byte, port 465) or none")
	o.boolean(fs, &c.Demo, "demo", "CARILLON_DEMO", "also run an in-process demo executor with a job firing every 5 s")
	o.str(fs, &o.logLevel, "log-level", "CARILLON_LOG_LEVEL", "info", "debug, info, warn or error")
	o.str(fs, &o.logFormat, "log-format", "CARILLON_LOG_FORMAT", logFormatText, "text (key=value lines) or json (one object a line)")
	o.str(fs, &c.MetricsListen, "metrics-listen", "CARILLON_METRICS_LISTEN", "",
		"address to serve Prometheus metrics on, at /metrics, without a credential: bind it where only the scraper reaches; empty: not served")
	fs.StringVar(&o.file, "config-file", "", "file of options, lines \"name = value\" (env CARILLON_CONFIG_FILE)")
	fs.BoolVar(&o.print, "print-config", false, "print every option with its value and where it came from, and exit")
	_ = cmd.MarkFlagFilename("config-file")
	_ = cmd.MarkFlagFilename("db", "db")
	for _, n := range []string{"tls-cert", "tls-key", "executor-ca-file"} {
		_ = cmd.MarkFlagFilename(n, "pem", "crt", "key")
	}
	_ = cmd.RegisterFlagCompletionFunc("log-level", cobra.FixedCompletions([]string{"debug", "info", "warn", "error"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("smtp-tls", cobra.FixedCompletions([]string{"starttls", "opportunistic", "implicit", "none"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{logFormatText, logFormatJSON}, cobra.ShellCompDirectiveNoFileComp))

	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		e.ran = true
		if err := o.layer(); err != nil {
			return err
		}
		if o.print {
			// What it prints is checked as serve would check it: a
			// configuration that prints is one that starts.
			if err := o.printConfig(e.io.out); err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return usagef("serve: the configuration above would not start:\n%v", err)
			}
			return nil
		}
		if err := o.validate(); err != nil {
			return o.logged(e.io.err, usagef("serve: %v", err))
		}
		return o.logged(e.io.err, o.serve(cmd, e.io.err))
	}
	return cmd
}

func (o *serveOptions) str(fs *pflag.FlagSet, p *string, name, env, def, usage string) {
	fs.StringVar(p, name, def, usage+" (env "+env+")")
	o.envs[name] = env
}

// secretStr defines an option whose value is never shown: it has no
// default in --help, and --print-config says only whether it is set.
func (o *serveOptions) secretStr(fs *pflag.FlagSet, p *string, name, env, usage string) {
	o.str(fs, p, name, env, "", usage)
	o.secret[name] = true
}

func (o *serveOptions) boolean(fs *pflag.FlagSet, p *bool, name, env, usage string) {
	fs.BoolVar(p, name, false, usage+" (env "+env+"=1)")
	o.envs[name] = env
}

// serve runs the admin with the layered options.
func (o *serveOptions) serve(cmd *cobra.Command, stderr io.Writer) error {
	cfg := o.cfg
	if !store.IsPostgresURL(cfg.DBPath) {
		cfg.DBPath = o.proc.path(cfg.DBPath)
	}
	cfg.TLSCert, cfg.TLSKey, cfg.ExecutorCAFile = o.proc.path(cfg.TLSCert), o.proc.path(cfg.TLSKey), o.proc.path(cfg.ExecutorCAFile)
	logs, err := newLogHandler(stderr, o.logLevel, o.logFormat)
	if err != nil {
		return usagef("serve: %v", err)
	}
	ctx := cmd.Context()
	tp, stopTracing, err := tracing.FromEnv(ctx, tracing.ServiceNameDefault)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(ctx); err != nil {
			slog.New(logs).Warn("tracing: flush spans: " + err.Error())
		}
	}()
	cfg.TracerProvider = tp
	cfg.Logger = slog.New(tracing.LogHandler{Handler: logs})
	// The one-time secrets are for a person at a terminal, not for a log
	// pipeline: without one, the admin logs how to get them instead.
	cfg.Console, cfg.HideSecrets = stderr, !o.terminal(stderr)
	if o.logFormat == logFormatJSON {
		cfg.Console = jsonConsole{stderr}
	}
	return admin.Run(ctx, cfg)
}

// logged writes err, with --log-format json, as the log's last record, so
// that every line serve writes is JSON, and returns it as a loggedError
// with its exit code; otherwise it returns err, which is printed as
// "carillon: ..." on exit.
func (o *serveOptions) logged(stderr io.Writer, err error) error {
	if err == nil || o.logFormat != logFormatJSON {
		return err
	}
	h, herr := newLogHandler(stderr, "error", logFormatJSON)
	if herr != nil {
		return err
	}
	slog.New(h).Error("carillon serve stopped: "+err.Error(), "err", err.Error())
	return loggedError{err, exitCode(io.Discard, err)}
}

// validate checks the options as the admin would before it opens
// anything, naming each bad option: the flag's name, where it came from.
func (o *serveOptions) validate() error {
	c := &o.cfg
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s (from %s)", name, fmt.Sprintf(format, args...), o.sources[name]))
	}
	if _, err := newLogHandler(io.Discard, o.logLevel, o.logFormat); err != nil {
		errs = append(errs, err)
	}
	for name, addr := range map[string]string{"listen": c.Listen, "metrics-listen": c.MetricsListen} {
		if addr == "" && name == "metrics-listen" {
			continue
		}
		if _, port, err := net.SplitHostPort(addr); err != nil {
			bad(name, "%q: want HOST:PORT (%v)", addr, err)
		} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			bad(name, "%q: the port is not a number from 0 to 65535", addr)
		}
	}
	if c.SMTP.Addr != "" && c.SMTP.From == "" {
		bad("smtp-from", "required with --smtp-addr")
	}
	if !c.SMTP.TLS.Valid() {
		bad("smtp-tls", "%q: want starttls, opportunistic, implicit or none", c.SMTP.TLS)
	}
	if c.SMTP.OAuth2Token != "" && c.SMTP.Username == "" {
		bad(optSMTPOAuth2Token, "needs --smtp-username, the account it authenticates")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("tls-cert", "--tls-cert and --tls-key go together")
	}
	for name, file := range map[string]string{"tls-cert": c.TLSCert, "tls-key": c.TLSKey, "executor-ca-file": c.ExecutorCAFile} {
		if file == "" {
			continue
		}
		if _, err := os.Stat(o.proc.path(file)); err != nil {
			bad(name, "%v", err)
		}
	}
	if c.AlarmWebhook != "" {
		if u, err := url.Parse(c.AlarmWebhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("alarm-webhook", "%q: want an http:// or https:// URL", c.AlarmWebhook)
		}
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			bad("public-url", "%q: want an http:// or https:// URL without a query or fragment", c.PublicURL)
		}
	}
	if format, err := alarm.ParseFormat(c.AlarmWebhookFormat); err != nil {
		bad("alarm-webhook-format", "%v", err)
	} else if err := alarm.CheckWebhook(format, c.AlarmWebhookSecret, c.AlarmWebhookTemplate); err != nil {
		var fe *alarm.FieldError
		if errors.As(err, &fe) {
			bad(fe.Field, "%s", fe.Rule)
		}
	}
	c.OIDC, c.LocalLoginDisabled = o.oidc.check(c.PublicURL, bad), !o.oidc.localLogin
	if _, err := server.ParseWebhookAllow(c.AlarmWebhookAllow); err != nil {
		bad("alarm-webhook-allow", "%v", err)
	}
	if c.RetentionDays < -1 {
		bad("retention-days", "%d: want -1 (keep all) or more", c.RetentionDays)
	}
	if c.MisfireThreshold < 0 {
		bad("misfire-threshold", "%s: want 0 or more", c.MisfireThreshold)
	}
	if c.LeaseDuration < time.Second || c.LeaseDuration > time.Minute {
		bad("lease-duration", "%s: want 1s to 1m", c.LeaseDuration)
	}
	if c.FiresPerAdmin < 0 {
		bad("fires-per-admin", "%d: want 0 (every admin shares) or more", c.FiresPerAdmin)
	}
	return errors.Join(errs...)
}

// printConfig prints every option, its value (a secret's only as set or
// not) and its source.
func (o *serveOptions) printConfig(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "OPTION\tVALUE\tSOURCE")
	o.each(func(f *pflag.Flag) {
		v := f.Value.String()
		switch {
		case o.secret[f.Name] && v != "":
			v = "(set)"
		case o.secret[f.Name]:
			v = "(not set)"
		case v == "":
			v = `""`
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Name, v, o.sources[f.Name])
	})
	return tw.Flush()
}

// each calls f for every option (not --config-file and --print-config),
// in the order of the help.
func (o *serveOptions) each(f func(*pflag.Flag)) {
	o.flags.VisitAll(func(fl *pflag.Flag) {
		if o.envs[fl.Name] != "" {
			f(fl)
		}
	})
	o.extra.VisitAll(f)
}

// Command carillon is Carillon's admin, a job scheduler over an embedded
// SQLite database serving the Connect API on one port, and the admin's
// command-line client.
//
// Usage:
//
//	carillon [serve] [flags]          run the admin
//	carillon login --user NAME        log in to an admin; later commands use the session
//	carillon COMMAND [flags] [args]   group, job, run, user, token, audit, ... (carillon help)
//
// Every serve flag has an environment variable equivalent, named in its
// help. Client commands exit 0 on success and with a code per kind of
// failure (carillon help lists them).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	_ "time/tzdata" // named time zones work on hosts without zoneinfo

	"github.com/carillonhq/carillon/admin"
	"github.com/carillonhq/carillon/admin/internal/retention"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/tracing"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
}

// run runs one command and returns the process's exit code (see usage).
func run(ctx context.Context, args []string, io stdio) int {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	if cmd == "serve" {
		return exitCode(io.err, serve(ctx, args, io.err))
	}
	if cmd == "reset-admin-password" {
		return exitCode(io.err, resetAdminPassword(ctx, args, io))
	}
	if cmd == "version" {
		if len(args) > 0 {
			return exitCode(io.err, usageError{fmt.Errorf("version: unexpected arguments %q", args)})
		}
		return exitCode(io.err, printVersion(io.out))
	}
	return exitCode(io.err, client(ctx, cmd, args, io))
}

// resetAdminPassword runs "carillon reset-admin-password": on the host,
// with the admin stopped, the way back in when no ADMIN can log in.
func resetAdminPassword(ctx context.Context, args []string, std stdio) error {
	fs := flag.NewFlagSet("carillon reset-admin-password", flag.ContinueOnError)
	fs.SetOutput(std.err)
	db := fs.String("db", env("CARILLON_DB", admin.DBPathDefault), "the admin's SQLite database file (env CARILLON_DB)")
	user := fs.String("user", admin.FirstAdminUsername, "the user to make an enabled ADMIN with a new password; created if missing")
	stdin := fs.Bool("password-stdin", false, "read the new password from the first line of stdin; otherwise one is generated and printed")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("reset-admin-password: unexpected arguments %q", fs.Args())}
	}
	var password string
	if *stdin {
		line, err := bufio.NewReader(std.in).ReadString('\n')
		if err != nil && line == "" {
			return usageError{errors.New("--password-stdin: want the password on the first line of stdin")}
		}
		password = strings.TrimRight(line, "\r\n")
	}
	set, err := admin.ResetAdminPassword(ctx, *db, *user, password, 0)
	if err != nil {
		return err
	}
	if *stdin {
		fmt.Fprintf(std.err, "carillon: %s is an enabled ADMIN with the password you gave; its sessions and API tokens were ended\n", *user)
		return nil
	}
	fmt.Fprintf(std.err, "carillon: %s is an enabled ADMIN with this password, shown only this once (its sessions and API tokens were ended):\n\n    %s\n\n"+
		"  Log in with:  carillon login --user %s\n  then change it with:  carillon user passwd\n", *user, set, *user)
	return nil
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("carillon serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg admin.Config
	fs.StringVar(&cfg.Listen, "listen", env("CARILLON_LISTEN", admin.ListenDefault), "address to serve the API on (env CARILLON_LISTEN)")
	fs.StringVar(&cfg.DBPath, "db", env("CARILLON_DB", admin.DBPathDefault), "SQLite database file, created if missing (env CARILLON_DB)")
	fs.StringVar(&cfg.Token, "token", os.Getenv("CARILLON_TOKEN"),
		"executor access token; empty: the one generated on first start and kept in the database (env CARILLON_TOKEN)")
	fs.BoolVar(&cfg.Insecure, "insecure", os.Getenv("CARILLON_INSECURE") == "1",
		"run without an executor access token when --token is empty: anyone may register executors (env CARILLON_INSECURE=1)")
	fs.StringVar(&cfg.AdminPassword, "admin-password", os.Getenv("CARILLON_ADMIN_PASSWORD"),
		"password of the first ADMIN \"admin\", created on first start; empty: generated and printed once (env CARILLON_ADMIN_PASSWORD, preferred: flags show in ps)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", os.Getenv("CARILLON_TLS_CERT"), "PEM certificate file: serve HTTPS instead of cleartext (env CARILLON_TLS_CERT)")
	fs.StringVar(&cfg.TLSKey, "tls-key", os.Getenv("CARILLON_TLS_KEY"), "PEM private key file of --tls-cert (env CARILLON_TLS_KEY)")
	fs.StringVar(&cfg.ExecutorCAFile, "executor-ca-file", os.Getenv("CARILLON_EXECUTOR_CA_FILE"),
		"PEM file of CA certificates to trust, besides the system's, for executors served over https (env CARILLON_EXECUTOR_CA_FILE)")
	fs.DurationVar(&cfg.MisfireThreshold, "misfire-threshold", envDuration("CARILLON_MISFIRE_THRESHOLD", schedule.MisfireThresholdDefault),
		"how late a fire may be before the job's misfire strategy handles it (env CARILLON_MISFIRE_THRESHOLD)")
	fs.BoolVar(&cfg.Demo, "demo", os.Getenv("CARILLON_DEMO") == "1",
		"also run an in-process demo executor with a job firing every 5 s; the database defaults to "+demoDBPath+" (env CARILLON_DEMO=1)")
	fs.IntVar(&cfg.RetentionDays, "retention-days", envInt("CARILLON_RETENTION_DAYS", retention.DaysDefault),
		"days of runs to keep; -1 keeps all (env CARILLON_RETENTION_DAYS)")
	fs.StringVar(&cfg.AlarmWebhook, "alarm-webhook", os.Getenv("CARILLON_ALARM_WEBHOOK"),
		"URL that receives every alarm as a JSON POST (env CARILLON_ALARM_WEBHOOK)")
	fs.StringVar(&cfg.AlarmWebhookAllow, "alarm-webhook-allow", os.Getenv("CARILLON_ALARM_WEBHOOK_ALLOW"),
		"comma-separated URL prefixes that users other than ADMINs may set as a job's alarm webhook; empty: only ADMINs set webhooks (env CARILLON_ALARM_WEBHOOK_ALLOW)")
	fs.StringVar(&cfg.SMTP.Addr, "smtp-addr", os.Getenv("CARILLON_SMTP_ADDR"), "SMTP server host:port for alarm e-mails (env CARILLON_SMTP_ADDR)")
	fs.StringVar(&cfg.SMTP.From, "smtp-from", os.Getenv("CARILLON_SMTP_FROM"), "sender address of alarm e-mails (env CARILLON_SMTP_FROM)")
	fs.StringVar(&cfg.SMTP.Username, "smtp-username", os.Getenv("CARILLON_SMTP_USERNAME"), "SMTP user name (env CARILLON_SMTP_USERNAME)")
	cfg.SMTP.Password = os.Getenv("CARILLON_SMTP_PASSWORD") // from the environment only, so it is not in ps output
	logLevel := fs.String("log-level", env("CARILLON_LOG_LEVEL", "info"), "debug, info, warn or error (env CARILLON_LOG_LEVEL)")
	logFormat := fs.String("log-format", env("CARILLON_LOG_FORMAT", logFormatText), "text (key=value lines) or json (one object a line) (env CARILLON_LOG_FORMAT)")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", os.Getenv("CARILLON_METRICS_LISTEN"),
		"address to serve Prometheus metrics on, at /metrics, without a credential: bind it where only the scraper reaches; empty: not served (env CARILLON_METRICS_LISTEN)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("serve: unexpected arguments %q", fs.Args())}
	}
	if cfg.SMTP.Addr != "" && cfg.SMTP.From == "" {
		return errors.New("serve: --smtp-from is required with --smtp-addr")
	}
	if cfg.Demo && !flagSet(fs, "db") && os.Getenv("CARILLON_DB") == "" {
		cfg.DBPath = demoDBPath // keep the demo's group and job out of the real database
	}
	logs, err := newLogHandler(stderr, *logLevel, *logFormat)
	if err != nil {
		return usageError{fmt.Errorf("serve: %w", err)}
	}
	tp, stopTracing, err := tracing.FromEnv(ctx, tracing.ServiceNameDefault)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(ctx); err != nil {
			fmt.Fprintf(stderr, "carillon: tracing: flush spans: %v\n", err)
		}
	}()
	cfg.TracerProvider = tp
	cfg.Logger = slog.New(tracing.LogHandler{Handler: logs})
	cfg.Console = stderr
	return admin.Run(ctx, cfg)
}

// demoDBPath is the database of --demo unless --db says otherwise.
const demoDBPath = "carillon-demo.db"

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// Package admin is Carillon's admin: the composition root that opens the
// store, starts the scheduler and serves the Connect API on one port.
package admin

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	"github.com/carillonhq/carillon/admin/internal/alarm"
	"github.com/carillonhq/carillon/internal/testsignal"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/carillonhq/carillon/admin/internal/console"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/retention"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/server"
	"github.com/carillonhq/carillon/admin/internal/service"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
)

const (
	// ListenDefault is the default Config.Listen.
	ListenDefault = "127.0.0.1:8080"
	// DBPathDefault is the default Config.DBPath.
	DBPathDefault = "carillon.db"
	// ShutdownTimeoutDefault is the default Config.ShutdownTimeout.
	ShutdownTimeoutDefault = 10 * time.Second
	// prepareAhead is how long before its send a fire is handed to the
	// trigger, which claims it if it is a pending run (the scan's fires
	// come claimed) and routes it, so that it is sent on time: on its
	// instant, or Config.SendAhead before it. A job stopped in between has
	// the claimed run skipped.
	prepareAhead = 100 * time.Millisecond
	// prepareAheadPerFire hands the fires of a burst over earlier, by this
	// much per fire due on their instant, for the trigger's routing of
	// them, on top of trigger.SendAheadPerRun for their calls.
	prepareAheadPerFire = 5 * time.Microsecond
)

// Config configures the admin.
type Config struct {
	// Listen is the address the API is served on. Defaults to ListenDefault.
	Listen string
	// DBPath is the SQLite database file, created if missing, or the URL of
	// a PostgreSQL database (postgres://user:password@host:5432/db), which
	// several admins may share. Defaults to DBPathDefault.
	DBPath string
	// Token is the executor access token, sent and required as
	// "Authorization: Bearer <token>" on executor <-> admin calls. When
	// empty, the token generated on first start and kept in the database is
	// used (generated now if there is none), unless Insecure is set.
	Token string
	// Insecure runs without an executor token when Token is empty: any
	// caller may register executors and report results. Never in production.
	Insecure bool
	// AdminPassword is the password of the first ADMIN ("admin"), created on
	// first start when there is no user. Empty: one is generated and printed
	// once to Console. Ignored once users exist.
	AdminPassword string
	// PasswordCost is the bcrypt cost of password hashes. Defaults to
	// auth.PasswordCostDefault.
	PasswordCost int
	// TLSCert and TLSKey are PEM files; when set, the API is served over
	// HTTPS (HTTP/1.1 and HTTP/2) instead of cleartext HTTP and h2c.
	TLSCert, TLSKey string
	// ExecutorCAFile is a PEM file of CA certificates trusted, besides the
	// system's, for executors served over https (an AdvertiseURL
	// "https://…" signed by a private CA). Defaults to "": the system's
	// roots only.
	ExecutorCAFile string
	// Console receives what the person starting the admin must see once:
	// a generated first-ADMIN password, where the executor token is kept,
	// the demo's API token. Defaults to os.Stderr.
	Console io.Writer
	// HideSecrets keeps generated secrets out of Console and the log, for
	// an admin whose output goes to a log pipeline: the first-start notices
	// are logged through Logger instead, without the secrets, saying how
	// to get them. No first ADMIN is created without AdminPassword (a
	// later start with secrets shown creates it, or carillon
	// reset-admin-password), and the demo prints no API token. The
	// carillon command sets it when its stderr is not a terminal.
	HideSecrets bool
	// MisfireThreshold is how late a fire may be before the job's misfire
	// strategy handles it. Defaults to schedule.MisfireThresholdDefault (5 s).
	MisfireThreshold time.Duration
	// LeaseDuration is, over PostgreSQL, how long this admin's lease holds
	// after each renewal (every quarter of it): a stall longer than it, on
	// a busy machine or database, may get the admin adopted and stopped,
	// and a dead admin's fires go on about it after its death. Defaults
	// to store.LeaseDuration (1 s). Over SQLite it does nothing.
	LeaseDuration time.Duration
	// FiresPerAdmin is, over PostgreSQL, how many fires a second one admin
	// takes before another live admin shares them (store.SetFiresPerAdmin):
	// admins sharing a load one of them holds cost about twice its CPU.
	// 0 shares them between every live admin. Give every admin the same.
	FiresPerAdmin int64
	// SendAhead is how long before its instant a scheduled run is sent to
	// an executor that starts runs at their due_at itself (the Go SDK; see
	// trigger.Config.SendAhead). Such an executor starts the run on its
	// instant by its own clock: the clocks of the admin and executors must
	// agree (NTP); the admin warns of an executor more than 50 ms off.
	// Negative sends every run on its instant. Defaults to
	// trigger.SendAheadDefault (300 ms).
	SendAhead time.Duration
	// ShutdownTimeout bounds a graceful shutdown. Defaults to ShutdownTimeoutDefault.
	ShutdownTimeout time.Duration
	// RetentionDays is how many days of runs are kept. Defaults to
	// retention.DaysDefault (30); negative keeps every run.
	RetentionDays int
	// AlarmWebhook, if set, receives every alarm as a POST in
	// AlarmWebhookFormat (jobs can add their own webhook).
	AlarmWebhook string
	// AlarmWebhookFormat is what AlarmWebhook receives: one of
	// alarm.FormatNames; empty is json.
	AlarmWebhookFormat string
	// AlarmWebhookSecret signs what AlarmWebhook receives where its format
	// signs (alarm.Webhook).
	AlarmWebhookSecret string
	// AlarmWebhookTemplate is the text/template of the template format.
	AlarmWebhookTemplate string
	// PublicURL is the admin's address as its users reach it (the console,
	// behind a proxy perhaps): alarms link to their run there. Empty:
	// alarms carry no link.
	PublicURL string
	// OIDC, if set, signs users in by single sign-on with an OpenID
	// Connect provider (server.OIDC; its PublicURL defaults to PublicURL,
	// its Key is kept in the database). Issuer, ClientID and PublicURL are
	// required then.
	OIDC *OIDC
	// LocalLoginDisabled refuses passwords (UserService/Login): people sign
	// in by single sign-on, programs use API tokens. Needs OIDC.
	LocalLoginDisabled bool
	// AlarmWebhookAllow lists the URL prefixes, comma-separated, that users
	// other than ADMINs may set as a job's alarm webhook URL (see
	// server.ParseWebhookAllow); empty: only ADMINs set webhook URLs.
	AlarmWebhookAllow string
	// SMTP, if Addr is set, sends alarms by e-mail to each job's alarm_emails.
	SMTP SMTP
	// Demo starts an in-process executor with a demo group and job firing
	// every 5 seconds, so a newcomer sees runs with nothing else installed.
	Demo bool
	// MetricsListen, if set, is the address Prometheus metrics are served
	// on, at /metrics, by a listener of their own: no credential protects
	// them, so bind it to an address only the scraper reaches (loopback,
	// a private interface, a firewalled port). Defaults to "": metrics are
	// counted but served only through Admin.MetricsHandler.
	MetricsListen string
	// TracerProvider, if set, traces fires: a span "carillon.fire" per run
	// from its call's preparation to its dispatch, whose context reaches
	// the executor (RunRequest.trace_context and the call's headers), so
	// that an SDK executor's run span is its child; and the API's calls
	// (otelconnect). Log with a Logger whose handler is wrapped by
	// tracing.LogHandler (the carillon command does) to get trace ids in
	// the log. The carillon command sets it from the OTEL_* environment.
	// Defaults to nil: no spans, no tracing interceptor, no cost.
	TracerProvider trace.TracerProvider
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// SMTP is the mail server that sends alarm e-mails: Addr ("host:port"),
// the sender, how TLS is used (TLS: "starttls", the default when empty,
// "opportunistic", "implicit" or "none"), and optional credentials (a
// password, or an OAuth 2 token for XOAUTH2).
type SMTP = alarm.Email

// OIDC configures single sign-on (see server.OIDC).
type OIDC = server.OIDC

// oidcKeySetting names the setting that keeps the key of single sign-on's
// login cookie, the same for every admin of the database.
const oidcKeySetting = "oidc_login_cookie_key"

// Admin is a running admin's parts.
type Admin struct {
	cfg       Config
	store     *store.Store
	lease     service.Service // renews the store's lease (PostgreSQL) from Open to Close
	trigger   *trigger.Trigger
	scheduler *schedule.Scheduler
	server    *server.Server
	alarms    *alarm.Sender
	metrics   *metrics.Metrics
	metricsLn net.Listener     // nil without Config.MetricsListen
	cert      *tls.Certificate // nil without Config.TLSCert
}

// Open opens the database and builds the admin; Serve runs it. Close the
// Admin when Serve has returned. It checks the configuration, reads the
// TLS key pair and binds the metrics listener before it opens, creates or
// migrates the database: a start refused for those leaves no database
// behind and spends no first-start password.
func Open(ctx context.Context, cfg Config) (a *Admin, err error) {
	cfg.Listen = cmp.Or(cfg.Listen, ListenDefault)
	cfg.DBPath = cmp.Or(cfg.DBPath, DBPathDefault)
	cfg.ShutdownTimeout = cmp.Or(cfg.ShutdownTimeout, ShutdownTimeoutDefault)
	sendAhead := cmp.Or(cfg.SendAhead, trigger.SendAheadDefault)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.Console == nil {
		cfg.Console = os.Stderr
	}
	executorTLS, err := clientTLS(cfg.ExecutorCAFile)
	if err != nil {
		return nil, fmt.Errorf("admin: executor CA file: %w", err)
	}
	webhookAllow, err := server.ParseWebhookAllow(cfg.AlarmWebhookAllow)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	webhook, err := adminWebhook(cfg)
	if err != nil {
		return nil, err
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, fmt.Errorf("%w: --tls-cert and --tls-key go together", ErrConfig)
	}
	if err := checkOIDC(&cfg); err != nil {
		return nil, err
	}
	var cert *tls.Certificate
	if cfg.TLSCert != "" {
		c, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("admin: TLS: %w", err)
		}
		cert = &c
	}
	var metricsLn net.Listener
	if cfg.MetricsListen != "" {
		if metricsLn, err = net.Listen("tcp", cfg.MetricsListen); err != nil {
			return nil, fmt.Errorf("admin: metrics listen: %w: is another admin running? stop it, or pass another --metrics-listen", err)
		}
		defer func() {
			if err != nil {
				_ = metricsLn.Close()
			}
		}()
	}
	st, err := store.Open(ctx, cfg.DBPath)
	if err != nil {
		return nil, err
	}
	// Over PostgreSQL, Open took this admin's lease: it is renewed from
	// now on until Close, or other admins adopt this one before it serves.
	if cfg.LeaseDuration > 0 {
		st.SetLeaseDuration(cfg.LeaseDuration)
	}
	st.SetFiresPerAdmin(cfg.FiresPerAdmin)
	lease := st.LeaseLoop()
	if err := lease.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, errors.Join(err, st.Close())
	}
	defer func() {
		if err != nil {
			lease.Stop()
		}
	}()
	m := metrics.New()
	st.ObserveWrites(m.StoreWrite)
	if fi, err := os.Stat(cfg.DBPath); err == nil && !st.Shared() && fi.Mode().Perm()&0o077 != 0 {
		cfg.Logger.Warn("admin: other users can read the database file, which holds the executor token and password hashes: "+
			"chmod 600 it and its -wal and -shm files", "db", cfg.DBPath, "mode", fi.Mode().Perm().String())
	}
	tokenGenerated, err := secure(ctx, st, &cfg)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	if cfg.OIDC != nil {
		key, _, err := st.Settings.Init(ctx, oidcKeySetting, server.NewOIDCKey(), time.Now())
		if err != nil {
			return nil, errors.Join(err, st.Close())
		}
		oidcCfg := *cfg.OIDC
		oidcCfg.Key = []byte(key)
		cfg.OIDC = &oidcCfg
	}
	// What the previous admin process left: the runs it claimed and did
	// not record as sent, read before this one claims any, and the last
	// heartbeat it heard. Over a shared database, Reconcile adopts the
	// runs of dead admins instead.
	var unsent []int64
	if !st.Shared() {
		if unsent, err = st.Runs.UnsentIDs(ctx); err != nil {
			return nil, errors.Join(err, st.Close())
		}
	}
	lastBeat, err := st.Registry.LastBeat(ctx)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	// The scheduler hands due fires to the trigger (Run's Dispatcher); the
	// trigger queues what settling makes due on the scheduler (its Queue).
	var trig *trigger.Trigger // set below, before the scheduler runs
	sched := schedule.New(schedule.Config{
		Store: st, MisfireThreshold: cfg.MisfireThreshold, Logger: cfg.Logger, FireAhead: prepareAhead + max(sendAhead, 0), Metrics: m,
		FireAheadPerFire: prepareAheadPerFire + trigger.SendAheadPerRun, FireGather: trigger.GatherInstants,
		KillFunc: func(runs []store.Run) {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := trig.KillRuns(ctx, runs, "killed: its workflow run was covered by a later one (COVER_EARLY)"); err != nil {
					cfg.Logger.Error("admin: kill the runs of a covered workflow run", "runs", len(runs), "err", err)
				}
			}()
		},
		EndedFunc:  func(ended []store.WorkflowRun) { trig.Completer.WorkflowRunsEnded(ended) },
		Overloaded: func() (string, bool) { return trig.Dispatcher.Overloaded() },
	})
	channels := []alarm.Channel{{Name: "webhook", Alarm: webhook}}
	if cfg.SMTP.Addr != "" {
		channels = append(channels, alarm.Channel{Name: "email", Alarm: &cfg.SMTP})
	}
	alarms := alarm.NewSender(alarm.SenderConfig{Store: st, Channels: channels, Logger: cfg.Logger, Metrics: m, PublicURL: cfg.PublicURL})
	trig, err = trigger.New(trigger.Config{
		Store: st, Token: cfg.Token, Logger: cfg.Logger, Queue: sched, Alarms: alarms, SendAhead: sendAhead,
		LastBeat: lastBeat, Unsent: unsent, TLSClientConfig: executorTLS, Metrics: m, TracerProvider: cfg.TracerProvider,
		MisfireThreshold: cfg.MisfireThreshold,
		// A failure whose job names no recipient alarms only where the
		// admin has one of its own.
		FollowUp: followup.Policy{AdminAlarms: cfg.AlarmWebhook != ""},
	})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	interceptors := []connect.Interceptor{m.Interceptor()}
	if cfg.TracerProvider != nil {
		traced, err := otelconnect.NewInterceptor(otelconnect.WithTracerProvider(cfg.TracerProvider),
			otelconnect.WithPropagator(propagation.TraceContext{}), otelconnect.WithoutMetrics())
		if err != nil {
			return nil, errors.Join(fmt.Errorf("admin: tracing: %w", err), st.Close())
		}
		interceptors = append(interceptors, traced)
	}
	srv := server.New(server.Config{
		Store: st, Trigger: trig, WakeFunc: sched.Wake, Logger: cfg.Logger, WebhookAllow: webhookAllow,
		Console: console.Handler(), TLS: cfg.TLSCert != "", OIDC: cfg.OIDC, LocalLoginDisabled: cfg.LocalLoginDisabled,
		TokenGenerated: tokenGenerated, PasswordCost: cfg.PasswordCost, Interceptors: interceptors,
		ReadyFunc: func(context.Context) error { // /readyz and gRPC health
			if err := st.Writable(); err != nil {
				return err
			}
			return sched.Ready(time.Now())
		},
	})
	m.Sample(metrics.State{
		ExecutorsOnlineFunc: func(ctx context.Context) (map[string]int, error) {
			return st.Registry.Online(ctx, time.Now().Add(-trigger.ExecutorTTLDefault))
		},
		ScanLagFunc:       func() time.Duration { return sched.ScanLag(time.Now()) },
		WriteQueueFunc:    st.WritesWaiting,
		FireWritesFunc:    trig.WriteQueue,
		DatabaseBytesFunc: st.Size,
	})
	return &Admin{cfg: cfg, store: st, lease: lease, trigger: trig, scheduler: sched, server: srv, alarms: alarms, metrics: m,
		metricsLn: metricsLn, cert: cert}, nil
}

// Close closes the database, and the metrics listener if Serve did not
// run.
func (a *Admin) Close() error {
	if a.metricsLn != nil {
		_ = a.metricsLn.Close() // closed already by a Serve that ran
	}
	a.lease.Stop()
	return a.store.Close()
}

// MetricsHandler returns the handler of the admin's Prometheus metrics,
// to mount on a server of your own (Config.MetricsListen serves it at
// /metrics). It has no access control.
func (a *Admin) MetricsHandler() http.Handler { return a.metrics.Handler() }

// MetricsAddr returns the address the metrics listener is bound to (Open
// binds it), or nil without Config.MetricsListen.
func (a *Admin) MetricsAddr() net.Addr {
	if a.metricsLn == nil {
		return nil
	}
	return a.metricsLn.Addr()
}

// Handler returns the admin's HTTP handler (every Connect service, health
// and reflection).
func (a *Admin) Handler() http.Handler { return a.server.Handler() }

// Changed is emitted after each write the admin commits to its database:
// tests of what the API shows wait on it (admintest) instead of polling.
func (a *Admin) Changed() *testsignal.Signal { return a.store.Changed() }

// Run listens on cfg.Listen, opens the admin and serves until ctx ends.
// It binds the listener first: an address taken (by another admin, a
// demo still running) stops it before it creates or migrates a database
// or generates a first-start password.
func Run(ctx context.Context, cfg Config) error {
	addr := cmp.Or(cfg.Listen, ListenDefault)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("admin: listen: %w: is another admin (carillon serve --demo?) running on %s? stop it, or pass another --listen", err, addr)
	}
	a, err := Open(ctx, cfg)
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer func() { _ = a.Close() }()
	return a.Serve(ctx, ln)
}

// Serve serves the API on ln and runs the scheduler until ctx ends, a
// service fails, or (over PostgreSQL) this admin's lease is lost. It runs
// the admin as a list of services (service.Group), started in this order
// and stopped in the reverse order:
//
//  1. the store's loops (store.Store.Loops: WAL checkpoints, folds of run
//     counts; over PostgreSQL the following of the other admins), which
//     every other part relies on to its end (the lease is renewed from
//     Open to Close);
//  2. the trigger's drain, whose stop waits for every send begun to be
//     sent and recorded, under the lease;
//  3. the metrics server (with Config.MetricsListen), and the API's HTTP
//     server, whose stops let in-flight requests finish;
//  4. the background loops: reconciliation of the runs an earlier
//     process left, the monitor of lost and overdue runs, alarms,
//     retention; and the demo executor (Config.Demo), which deregisters
//     and flushes its results through the server when it stops;
//  5. the trigger's drain again: the scheduler's claimed fires are sent
//     while executors, the demo and the HTTP server are still up;
//  6. the scheduler's fire loop, which hands the trigger every fire
//     claimed and still queued when it stops, and its scan loop, which
//     stops first.
//
// So the shutdown goes: the scheduler stops scanning and hands every fire
// it claimed to the trigger, which sends each on its instant (at most the
// scheduler's look-ahead, 1.5 s) and records the dispatches; then the
// demo executor and the background loops stop, the HTTP servers stop
// taking requests (within Config.ShutdownTimeout of the shutdown's start),
// and in-flight work finishes. A graceful stop leaves no claimed fire
// unsent.
func (a *Admin) Serve(ctx context.Context, ln net.Listener) error {
	log := a.cfg.Logger
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true) // h2c, for gRPC clients without TLS
	hs := &http.Server{
		Handler:           http.MaxBytesHandler(a.Handler(), 8<<20),
		Protocols:         protocols,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	serve := func() error { return hs.Serve(ln) }
	if a.cert != nil {
		protocols.SetHTTP2(true)
		hs.TLSConfig, scheme = &tls.Config{Certificates: []tls.Certificate{*a.cert}, MinVersion: tls.VersionTLS12}, "https"
		serve = func() error { return hs.ServeTLS(ln, "", "") }
	}
	base := scheme + "://" + ln.Addr().String()
	// The HTTP servers' shutdown deadline: ShutdownTimeout from the
	// shutdown's start (or from the first stop of a start that failed).
	var shutdownAt time.Time
	shutdown := func() time.Time {
		if shutdownAt.IsZero() {
			shutdownAt = time.Now().Add(a.cfg.ShutdownTimeout)
		}
		return shutdownAt
	}

	services := append(a.store.Loops(), service.OnStop(a.trigger.Wait))
	if a.metricsLn != nil {
		metricsSrv := newMetricsServer(a.metrics.Handler(), log)
		services = append(services, newHTTPService("serve metrics", metricsSrv, func() error { return metricsSrv.Serve(a.metricsLn) }, shutdown))
	}
	services = append(services, newHTTPService("serve", hs, serve, shutdown),
		service.NewLoop(func(ctx context.Context) error {
			return a.trigger.Rescuer.Reconcile(ctx, trigger.ReconcileConfig{MisfireThreshold: a.cfg.MisfireThreshold})
		}),
		service.NewLoop(func(ctx context.Context) error { return a.trigger.Rescuer.Monitor(ctx, trigger.MonitorConfig{}) }),
		service.NewLoop(a.alarms.Run),
		service.NewLoop(func(ctx context.Context) error {
			return retention.Run(ctx, retention.Config{Store: a.store, Days: a.cfg.RetentionDays, Logger: log})
		}),
	)
	if a.cfg.Demo {
		services = append(services, service.NewLoop(func(ctx context.Context) error { return runDemo(ctx, a, base) }))
	}
	services = append(services, service.OnStop(a.trigger.Wait), a.scheduler.FireLoop(a.trigger.Dispatcher), a.scheduler.ScanLoop())
	parts := service.NewGroup(services...)

	if a.metricsLn != nil {
		log.Info("carillon metrics serving", "url", "http://"+a.metricsLn.Addr().String()+"/metrics")
	}
	log.Info("carillon admin serving", "url", base, "db", store.Redact(a.cfg.DBPath), "admin_id", a.store.AdminID(), "token_required", a.cfg.Token != "")
	// The services run until stopped, whatever ctx does meanwhile.
	err := parts.Start(context.WithoutCancel(ctx))
	if err == nil {
		select {
		case <-ctx.Done():
		case <-parts.Done(): // a service failed: Err says why
		case <-a.store.LeaseLost(): // nil, never ready, over SQLite
			err = fmt.Errorf("admin: this admin's lease on the database ran out (unreachable, or stalled over %s): "+
				"other admins took over its runs; stopping", cmp.Or(a.cfg.LeaseDuration, store.LeaseDuration))
		}
	}
	log.Info("carillon admin shutting down")
	shutdown() // the HTTP servers' deadline runs from now
	parts.Stop()
	return errors.Join(err, parts.Err())
}

// adminWebhook is the webhook channel of cfg: the admin-wide webhook, in
// its format, and the jobs' own. A bad format, secret or template is
// ErrConfig naming its flag.
func adminWebhook(cfg Config) (*alarm.Webhook, error) {
	format, err := alarm.ParseFormat(cfg.AlarmWebhookFormat)
	if err != nil {
		return nil, fmt.Errorf("%w: --alarm-webhook-format %w", ErrConfig, err)
	}
	if err := alarm.CheckWebhook(format, cfg.AlarmWebhookSecret, cfg.AlarmWebhookTemplate); err != nil {
		return nil, fmt.Errorf("%w: --%w", ErrConfig, err)
	}
	return &alarm.Webhook{URL: cfg.AlarmWebhook, Format: format, Secret: cfg.AlarmWebhookSecret, Template: cfg.AlarmWebhookTemplate}, nil
}

// checkOIDC checks the single sign-on configuration and fills its
// PublicURL from cfg's.
func checkOIDC(cfg *Config) error {
	if cfg.OIDC == nil {
		if cfg.LocalLoginDisabled {
			return fmt.Errorf("%w: --local-login=false needs single sign-on (--oidc-issuer): no one could sign in", ErrConfig)
		}
		return nil
	}
	o := *cfg.OIDC
	o.PublicURL = cmp.Or(o.PublicURL, cfg.PublicURL)
	if o.Issuer == "" || o.ClientID == "" || o.PublicURL == "" {
		return fmt.Errorf("%w: single sign-on needs --oidc-issuer, --oidc-client-id and --public-url together", ErrConfig)
	}
	cfg.OIDC = &o
	return nil
}

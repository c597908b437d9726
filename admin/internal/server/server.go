// Package server implements Carillon's Connect services over the store, the
// scheduler and the trigger. It converts between RPC messages and store
// types, validates every request, and maps store errors to Connect codes;
// no other package does.
package server

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/trigger"
	"github.com/carillonhq/carillon/admin/internal/xxljob"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// Config configures a Server.
type Config struct {
	// Store is the database. Required.
	Store *store.Store
	// Trigger dispatches manual fires and reaches executors. Required.
	Trigger *trigger.Trigger
	// WakeFunc is called after a change that may make a fire due sooner than
	// the scheduler's next scan (a job created, started or changed; a
	// FIX_DELAY run finished). Optional.
	WakeFunc func()
	// ExecutorTTL is how long an executor stays live after its last
	// heartbeat. Defaults to trigger.ExecutorTTLDefault.
	ExecutorTTL time.Duration
	// TokenGenerated says the global executor token (the Trigger's: see
	// trigger.Config.Token) was generated on first start and is kept in the
	// database (reported by UserService/GetExecutorToken).
	TokenGenerated bool
	// PasswordCost is the bcrypt cost of new password hashes. Defaults to
	// auth.PasswordCostDefault.
	PasswordCost int
	// SessionTTL is how long a Login session lasts. Defaults to
	// SessionTTLDefault (24 h).
	SessionTTL time.Duration
	// LoginLimiter limits login attempts. Defaults to auth.NewLoginLimiter
	// with its defaults.
	LoginLimiter *auth.LoginLimiter
	// ReadTimeout bounds each read of the management API (its Get and List
	// calls): past it the call fails with deadline_exceeded. Defaults to
	// ReadTimeoutDefault (10 s).
	ReadTimeout time.Duration
	// MaxReads is how many reads of the management API run at once.
	// Defaults to MaxReadsDefault.
	MaxReads int
	// MaxQueuedReads is how many more reads wait for their turn (up to
	// ReadTimeout); a read beyond them fails at once with
	// resource_exhausted. Defaults to MaxQueuedReadsDefault.
	MaxQueuedReads int
	// ReadyFunc says whether the admin can do its work (its database
	// writable, its scheduler scanning): nil when ready, else the reason.
	// It answers /readyz and grpc.health.v1. Defaults to always ready.
	ReadyFunc func(ctx context.Context) error
	// WebhookAllow lists the URL prefixes a user other than an ADMIN may
	// set as a job's alarm webhook; empty: only ADMINs set webhooks.
	WebhookAllow WebhookAllow
	// TLS says the admin serves HTTPS: the console's session cookie is then
	// Secure.
	TLS bool
	// OIDC, if set, signs users in by single sign-on (oidc.go).
	OIDC *OIDC
	// LocalLoginDisabled refuses Login with a password: users sign in by
	// single sign-on, programs with API tokens.
	LocalLoginDisabled bool
	// Console, if set, serves every path no RPC, health or reflection
	// handler takes: the web console.
	Console http.Handler
	// Interceptors wrap every Carillon service's handlers, outside
	// authentication and validation, in order (the first is the
	// outermost): metrics and tracing. Optional.
	Interceptors []connect.Interceptor
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// NowFunc defaults to time.Now.
	NowFunc func() time.Time
}

// Server implements the admin's Connect services.
type Server struct {
	cfg   Config
	reads *readLimiter
	// shape checks requests against their buf.validate rules.
	shape *shape
	// oidc runs single sign-on; nil without Config.OIDC.
	oidc *oidcFlow
	// unclaimed holds the app names of registrations no group had, each
	// logged once.
	unclaimed sync.Map
	// instances keeps the executor processes registered at the addresses
	// that report results.
	instances instanceCache
}

// New returns a Server.
func New(cfg Config) *Server {
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.ExecutorTTL = cmp.Or(cfg.ExecutorTTL, trigger.ExecutorTTLDefault)
	if cfg.NowFunc == nil {
		cfg.NowFunc = time.Now
	}
	if cfg.WakeFunc == nil {
		cfg.WakeFunc = func() {}
	}
	cfg.SessionTTL = cmp.Or(cfg.SessionTTL, SessionTTLDefault)
	if cfg.LoginLimiter == nil {
		cfg.LoginLimiter = auth.NewLoginLimiter(0, 0, 0, 0)
	}
	cfg.ReadTimeout = cmp.Or(cfg.ReadTimeout, ReadTimeoutDefault)
	cfg.MaxReads = cmp.Or(cfg.MaxReads, MaxReadsDefault)
	cfg.MaxQueuedReads = cmp.Or(cfg.MaxQueuedReads, MaxQueuedReadsDefault)
	if cfg.ReadyFunc == nil {
		cfg.ReadyFunc = func(context.Context) error { return nil }
	}
	s := &Server{cfg: cfg, reads: newReadLimiter(cfg.ReadTimeout, cfg.MaxReads, cfg.MaxQueuedReads), shape: newShape()}
	if cfg.OIDC != nil {
		s.oidc = newOIDCFlow(*cfg.OIDC)
	}
	return s
}

// compressMinBytes is the smallest response compressed for a client that
// accepts gzip: compressing the many small messages between the admin and
// its executors cost more CPU than it saved on loopback and LANs.
const compressMinBytes = 4 << 10

// Handler returns an http.Handler serving every Carillon service, gRPC
// health (grpc.health.v1) and server reflection, over the Connect, gRPC and
// gRPC-Web protocols, and GET /healthz (200 while the process serves) and
// GET /readyz (200 when Config.ReadyFunc says ready, else 503 with the
// reason), GET /auth/methods and, with Config.OIDC, single sign-on's
// /auth/oidc/login and /auth/oidc/callback (oidc.go). RegistryService takes the executor token; every other Carillon
// service a user credential (authn.go, rpcs.go); health, /healthz, /readyz and
// reflection are open. gRPC health answers NOT_SERVING when not ready.
// xxl-job executors' calls (/api/registry, /api/registryRemove,
// /api/callback, also under /xxl-job-admin/api/) become RegistryService
// calls through the same handler (package xxljob).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	registryOpts := []connect.HandlerOption{connect.WithReadMaxBytes(MaxRegistryRequestBytes), connect.WithCompressMinBytes(compressMinBytes),
		cappedGzipOption(MaxRegistryRequestBytes)}
	registryOpts = append(registryOpts, connect.WithInterceptors(s.cfg.Interceptors...),
		connect.WithInterceptors(requireExecutorToken(s.tokens()), s.shape))
	mux.Handle(carillonv1connect.NewRegistryServiceHandler(registryService{s}, registryOpts...))
	mgmt := append([]connect.HandlerOption{connect.WithReadMaxBytes(MaxRequestBytes), connect.WithCompressMinBytes(compressMinBytes),
		cappedGzipOption(MaxRequestBytes), connect.WithInterceptors(s.cfg.Interceptors...),
		connect.WithInterceptors(jsonNames{}, s.reads, authInterceptor{s})}, strictJSONCodecs()...)
	mux.Handle(carillonv1connect.NewGroupServiceHandler(groupService{s}, mgmt...))
	mux.Handle(carillonv1connect.NewJobServiceHandler(jobService{s}, mgmt...))
	mux.Handle(carillonv1connect.NewRunServiceHandler(runService{s}, mgmt...))
	mux.Handle(carillonv1connect.NewReportServiceHandler(reportService{s}, mgmt...))
	mux.Handle(carillonv1connect.NewUserServiceHandler(userService{s}, mgmt...))
	mux.Handle(carillonv1connect.NewWorkflowServiceHandler(workflowService{s}, mgmt...))
	mux.Handle(carillonv1connect.NewCalendarServiceHandler(calendarService{s}, mgmt...))
	mux.Handle(carillonv1connect.NewApplyServiceHandler(applyService{s}, mgmt...))
	services := []string{
		carillonv1connect.RegistryServiceName, carillonv1connect.GroupServiceName,
		carillonv1connect.JobServiceName, carillonv1connect.RunServiceName, carillonv1connect.ReportServiceName,
		carillonv1connect.UserServiceName, carillonv1connect.WorkflowServiceName, carillonv1connect.CalendarServiceName,
		carillonv1connect.ApplyServiceName,
	}
	checker := healthChecker{s: s, services: map[string]bool{}}
	for _, name := range services {
		checker.services[name] = true
	}
	mux.Handle(grpchealth.NewHandler(checker))
	// xxl-job executors' calls, made through the registry handler above.
	known := func(token string) bool { _, ok := s.tokens().Identify(token); return ok }
	xxl := xxljob.NewAdmin(&http.Client{Transport: inProcess{h: mux}}, "http://carillon.in-process", known, s.cfg.Logger)
	mux.Handle(xxljob.APIPath, xxl)
	mux.Handle(xxljob.LegacyAPIPath, xxl)
	mux.HandleFunc("GET /openapi.json", openAPI(openAPIJSON, "application/json"))
	mux.HandleFunc("GET /openapi.yaml", openAPI(openAPIYAML, "application/yaml"))
	mux.HandleFunc("GET "+AuthMethodsPath, s.authMethodsHandler)
	if s.oidc != nil {
		mux.HandleFunc("GET "+OIDCLoginPath, s.oidcLoginHandler)
		mux.HandleFunc("GET "+OIDCCallbackPath, s.oidcCallbackHandler)
	}
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	if s.cfg.Console != nil {
		mux.Handle("/", s.cfg.Console)
	}
	reflector := grpcreflect.NewStaticReflector(services...)
	mux.Handle(grpcreflect.NewHandlerV1(reflector))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	return plainErrors(requireContentType(mux))
}

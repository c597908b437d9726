// Package server implements Carillon's Connect services over the store, the
// scheduler and the trigger. It converts between RPC messages and store
// types, validates every request, and maps store errors to Connect codes;
// no other package does.
package server

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"

	"github.com/carillonhq/carillon/admin/store"
	"github.com/carillonhq/carillon/admin/trigger"
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
	// Token is the executor access token: RegistryService calls must carry
	// "Authorization: Bearer <token>". Empty accepts every call.
	Token string
	// ExecutorTTL is how long an executor stays live after its last
	// heartbeat. Defaults to trigger.ExecutorTTLDefault.
	ExecutorTTL time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// NowFunc defaults to time.Now.
	NowFunc func() time.Time
}

// Server implements the admin's Connect services.
type Server struct {
	cfg Config
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
	return &Server{cfg: cfg}
}

// Handler returns an http.Handler serving every Carillon service, gRPC
// health (grpc.health.v1) and server reflection, over the Connect, gRPC and
// gRPC-Web protocols.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	registryOpts := []connect.HandlerOption{}
	if s.cfg.Token != "" {
		registryOpts = append(registryOpts, connect.WithInterceptors(requireToken(s.cfg.Token)))
	}
	mux.Handle(carillonv1connect.NewRegistryServiceHandler(registryService{s}, registryOpts...))
	mux.Handle(carillonv1connect.NewGroupServiceHandler(groupService{s}))
	mux.Handle(carillonv1connect.NewJobServiceHandler(jobService{s}))
	mux.Handle(carillonv1connect.NewRunServiceHandler(runService{s}))
	mux.Handle(carillonv1connect.NewReportServiceHandler(reportService{s}))
	services := []string{
		carillonv1connect.RegistryServiceName, carillonv1connect.GroupServiceName,
		carillonv1connect.JobServiceName, carillonv1connect.RunServiceName, carillonv1connect.ReportServiceName,
	}
	mux.Handle(grpchealth.NewHandler(grpchealth.NewStaticChecker(services...)))
	reflector := grpcreflect.NewStaticReflector(services...)
	mux.Handle(grpcreflect.NewHandlerV1(reflector))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector))
	return mux
}

// requireToken refuses calls that do not carry "Authorization: Bearer
// <token>", comparing in constant time.
func requireToken(token string) connect.UnaryInterceptorFunc {
	want := []byte("Bearer " + token)
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			got := strings.TrimSpace(req.Header().Get("Authorization"))
			if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
				return nil, connect.NewError(connect.CodeUnauthenticated,
					errors.New("missing or wrong access token: send \"Authorization: Bearer <token>\" with the admin's --token"))
			}
			return next(ctx, req)
		}
	}
}

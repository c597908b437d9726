package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
)

// readyTimeout bounds a readiness check.
const readyTimeout = 5 * time.Second

// healthz answers 200 while the process serves HTTP: liveness.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyz answers 200 when Config.ReadyFunc says the admin can do its work
// (its database writable, its scheduler scanning), else 503 with the
// reason.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.ready(r.Context()); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: %v\n", err)
		return
	}
	fmt.Fprintln(w, "ready")
}

func (s *Server) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	return s.cfg.ReadyFunc(ctx)
}

// healthChecker answers grpc.health.v1 by readiness: SERVING for the
// server ("") and each of services when ready, NOT_SERVING otherwise.
type healthChecker struct {
	s        *Server
	services map[string]bool
}

func (c healthChecker) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if req.Service != "" && !c.services[req.Service] {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %s", req.Service))
	}
	if err := c.s.ready(ctx); err != nil {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}

package trigger

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/carillonhq/carillon/admin/internal/auth"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// jsonOnly is an executor that reads JSON only: a protobuf call gets 415,
// as from an executor written without protobuf. It notes each call's
// content type.
type jsonOnly struct {
	carillonv1connect.UnimplementedExecutorServiceHandler
	mu    sync.Mutex
	types []string
}

func (e *jsonOnly) Run(context.Context, *carillonv1.RunRequest) (*carillonv1.RunResponse, error) {
	return &carillonv1.RunResponse{}, nil
}

func (e *jsonOnly) serve(t *testing.T) string {
	t.Helper()
	_, h := carillonv1connect.NewExecutorServiceHandler(e)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.types = append(e.types, r.Header.Get("Content-Type"))
		e.mu.Unlock()
		if r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusUnsupportedMediaType)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (e *jsonOnly) calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.types)
}

// TestCodecFallback: a call to an executor that answers protobuf with 415
// is made again with JSON, and its later calls go with JSON at once; one
// that registered saying "json" gets JSON from the first call; one that
// registers again saying "proto" gets protobuf again.
func TestCodecFallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGateway(&Config{}, auth.NewExecutorTokens(""), nil)
	run := func(address string) {
		t.Helper()
		if _, err := g.client(ctx, 1, address).Run(ctx, &carillonv1.RunRequest{RunId: 7}); err != nil {
			t.Fatalf("Run at %s: %v", address, err)
		}
	}
	found := &jsonOnly{}
	addr := found.serve(t)
	run(addr)
	run(addr)
	if got, want := found.calls(), []string{"application/proto", "application/json", "application/json"}; !slices.Equal(got, want) {
		t.Errorf("calls to an executor found to speak JSON: %v, want %v", got, want)
	}

	told := &jsonOnly{}
	addr = told.serve(t)
	g.UseCodec(addr, "json")
	run(addr)
	if got, want := told.calls(), []string{"application/json"}; !slices.Equal(got, want) {
		t.Errorf("calls to an executor that registered saying json: %v, want %v", got, want)
	}
	g.UseCodec(addr, "proto")
	if _, err := g.client(ctx, 1, addr).Run(ctx, &carillonv1.RunRequest{RunId: 8}); err != nil {
		t.Fatal(err) // 415, then JSON again
	}
	if got := told.calls(); len(got) != 3 || got[1] != "application/proto" {
		t.Errorf("calls after it registered saying proto: %v, want protobuf first", got)
	}
}

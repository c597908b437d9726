package admin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// httpService is an HTTP server as a service.Watched: Start serves in a
// goroutine of its own; Stop shuts the server down gracefully by the
// deadline that shutdown returns then, and returns once it has. It fails
// if serving fails; a failed shutdown is its Err after Stop.
type httpService struct {
	name     string // "serve", "serve metrics": the start of its errors
	srv      *http.Server
	serve    func() error // srv.Serve, or ServeTLS, on its listener
	shutdown func() time.Time

	mu      sync.Mutex
	started bool
	err     error
	done    chan struct{} // closed once serve has returned
	stop    sync.Once
}

func newHTTPService(name string, srv *http.Server, serve func() error, shutdown func() time.Time) *httpService {
	return &httpService{name: name, srv: srv, serve: serve, shutdown: shutdown, done: make(chan struct{})}
}

// Start serves in a goroutine of its own.
func (h *httpService) Start(context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.started = true
	go func() {
		defer close(h.done)
		if err := h.serve(); !errors.Is(err, http.ErrServerClosed) {
			h.fail(fmt.Errorf("admin: %s: %w", h.name, err))
		}
	}()
	return nil
}

// Stop stops taking requests and waits for those in flight to finish,
// by h.shutdown's deadline.
func (h *httpService) Stop() {
	h.mu.Lock()
	started := h.started
	h.mu.Unlock()
	if !started {
		return
	}
	h.stop.Do(func() {
		ctx, cancel := context.WithDeadline(context.Background(), h.shutdown())
		defer cancel()
		if err := h.srv.Shutdown(ctx); err != nil {
			h.fail(err)
		}
		<-h.done
	})
}

func (h *httpService) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.err = errors.Join(h.err, err)
}

// Done is closed once the server has stopped serving.
func (h *httpService) Done() <-chan struct{} { return h.done }

// Err is why serving failed, or the shutdown did.
func (h *httpService) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

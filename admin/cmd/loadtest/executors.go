package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/carillonhq/carillon/sdk"
)

// handlerName is the measured jobs' handler.
const handlerName = "noop"

// receipt is one run that reached a handler.
type receipt struct {
	job int64
	at  int64 // scheduled instant, unix milliseconds
	got int64 // when the handler started, unix nanoseconds
}

// recorder keeps every receipt. It is safe for concurrent use.
type recorder struct {
	mu       sync.Mutex
	receipts []receipt
}

// handle is the no-op handler: it records the run and succeeds.
func (r *recorder) handle(_ context.Context, job *sdk.Job) error {
	got := time.Now().UnixNano()
	r.mu.Lock()
	r.receipts = append(r.receipts, receipt{job: job.JobID, at: job.ScheduledAt.UnixMilli(), got: got})
	r.mu.Unlock()
	return nil
}

// snapshot returns the receipts so far; the caller must not change them.
func (r *recorder) snapshot() []receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.receipts[:len(r.receipts):len(r.receipts)]
}

// executors runs n SDK executors of app on 127.0.0.1 ports, each with
// its own log directory under dir and the recorder's handler.
type executors struct {
	cancel context.CancelFunc
	log    *os.File
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
}

func startExecutors(ctx context.Context, n int, adminURLs []string, app, token, dir string, rec *recorder) (*executors, error) {
	logFile, err := os.Create(filepath.Join(dir, "executors-"+app+".log"))
	if err != nil {
		return nil, fmt.Errorf("executors' log: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(ctx)
	ex := &executors{cancel: cancel, log: logFile}
	for i := range n {
		e, err := sdk.New(sdk.Config{
			AdminURLs:       adminURLs,
			AppName:         app,
			AccessToken:     token,
			LogDir:          filepath.Join(dir, "executors", fmt.Sprintf("%s-%d", app, i)),
			ShutdownTimeout: 2 * time.Second,
			Logger:          logger,
		})
		if err != nil {
			_ = ex.stop()
			return nil, err
		}
		e.HandleFunc(handlerName, rec.handle)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = ex.stop()
			return nil, fmt.Errorf("executor listener: %w", err)
		}
		ex.wg.Go(func() {
			if err := e.Serve(ctx, ln); err != nil {
				ex.mu.Lock()
				ex.errs = append(ex.errs, err)
				ex.mu.Unlock()
			}
		})
	}
	return ex, nil
}

// stop stops every executor (each deregisters and flushes its results) and
// returns what stopped any of them early.
func (ex *executors) stop() error {
	ex.cancel()
	ex.wg.Wait()
	_ = ex.log.Close()
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return errors.Join(ex.errs...)
}

// waitRegistered waits until group id lists n executors.
func waitRegistered(ctx context.Context, a *api, id int64, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		addrs, err := a.groupAddresses(ctx, id)
		if err != nil {
			return err
		}
		if len(addrs) >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d executors registered after %s", len(addrs), n, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

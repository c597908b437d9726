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

// recorder keeps every receipt. It is safe for concurrent use. Its
// receipts are kept in recorderShards lists by job, each with its own
// lock: with one lock, the handlers of a burst of 10,000 runs queued on it
// (a sixth of them blocked in one measured burst), and the tool measured
// its own lock instead of the executors.
type recorder struct {
	fail   bool // the handler fails each run (--fail)
	shards [recorderShards]struct {
		mu       sync.Mutex
		receipts []receipt
		_        [64]byte // a cache line apart
	}
}

// recorderShards is how many locks a recorder's receipts are spread over.
const recorderShards = 64

// errFail is what the handler returns with --fail.
var errFail = errors.New("loadtest: --fail")

// handle is the no-op handler: it records the run and succeeds, or with
// --fail fails. A retry (--retries) is not recorded: its fire came
// before it.
func (r *recorder) handle(_ context.Context, job *sdk.Job) error {
	if job.Attempt > 0 {
		return r.outcome()
	}
	got := time.Now().UnixNano()
	sh := &r.shards[uint64(job.JobID)%recorderShards] //nolint:gosec // job IDs are positive
	sh.mu.Lock()
	sh.receipts = append(sh.receipts, receipt{job: job.JobID, at: job.ScheduledAt.UnixMilli(), got: got})
	sh.mu.Unlock()
	return r.outcome()
}

// outcome is what the handler returns: errFail with --fail.
func (r *recorder) outcome() error {
	if r.fail {
		return errFail
	}
	return nil
}

// snapshot returns a copy of the receipts so far.
func (r *recorder) snapshot() []receipt {
	var out []receipt
	for i := range r.shards {
		sh := &r.shards[i]
		sh.mu.Lock()
		out = append(out, sh.receipts...)
		sh.mu.Unlock()
	}
	return out
}

// executors runs SDK executors of an app on 127.0.0.1 ports, each with
// its own log directory.
type executors struct {
	cancel context.CancelFunc
	log    *os.File
	wg     sync.WaitGroup
	mu     sync.Mutex
	errs   []error
}

// startExecutors starts n executors of app, each with handlers set by
// handle.
func startExecutors(ctx context.Context, n int, adminURLs []string, app, token, dir string, handle func(*sdk.Executor)) (*executors, error) {
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
		handle(e)
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

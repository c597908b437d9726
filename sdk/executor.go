package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"

	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"

	"github.com/carillonhq/carillon/sdk/internal/report"
	"github.com/carillonhq/carillon/sdk/internal/runlog"
	"github.com/carillonhq/carillon/sdk/internal/runner"
)

// Limits of the executor's HTTP server.
const (
	readHeaderTimeout = 10 * time.Second
	maxHeaderBytes    = 64 << 10
	readMaxBytes      = 4 << 20 // a RunRequest, script source included
	idleConnTimeout   = 2 * time.Minute
)

// An Executor runs job handlers on behalf of a Carillon admin: it registers
// with the admin, serves the ExecutorService the admin calls to start,
// kill and inspect runs, and reports each run's result.
//
// Register handlers with [Executor.Handle] or [Executor.HandleFunc] and
// middleware with [Executor.Use], then call [Executor.Run], which serves
// until its context ends. Registering while the executor runs is allowed.
//
// Each job has a worker goroutine on the executor that runs the job's runs
// one after another, applying the job's block strategy when a run arrives
// while another runs or waits; workers of different jobs run concurrently,
// and a worker exits after about 90 seconds without work.
//
// A handler runs on its own goroutine. When its run's context ends (timeout,
// kill, shutdown) the run is reported at once; the worker then waits up to 5
// seconds for the handler to return before it abandons the goroutine and
// goes on with the job's next run. Go cannot stop a goroutine from outside:
// an abandoned handler keeps running until it returns by itself, its result
// is ignored and its later log lines are dropped. Handlers should watch
// ctx.
type Executor struct {
	cfg Config

	mu         sync.RWMutex
	handlers   map[string]Handler
	middleware []Middleware

	ownClient   bool // cfg.HTTPClient is the default one, made by New
	running     atomic.Bool
	serving     atomic.Pointer[http.Handler] // the service, while Serve serves
	errorWriter *connect.ErrorWriter
	observers   observers // guarded by mu

	stats          atomic.Pointer[servingStats] // the Serve under way's; nil between Serves
	reportFailures atomic.Int64
}

// servingStats is what [Executor.Stats] reads of a serving executor.
type servingStats struct {
	d  *runner.Dispatcher
	sp *report.Spool
}

// errNotServing refuses calls to [Executor.Handler] outside Serve.
var errNotServing = errors.New("sdk: executor not serving")

// New returns an Executor for cfg, with defaults applied to its zero
// fields. It fails with an error wrapping [ErrInvalidConfig] that names the
// wrong field. New starts nothing: see [Executor.Run].
func New(cfg Config) (*Executor, error) {
	own := cfg.HTTPClient == nil
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Executor{
		cfg:         cfg,
		handlers:    make(map[string]Handler),
		ownClient:   own,
		errorWriter: connect.NewErrorWriter(),
	}
	return e, nil
}

// Handle registers h to run the jobs whose handler name is name. It panics
// if name is empty, h is nil, or a handler is already registered under
// name: those are programming errors, like in [net/http.ServeMux.Handle].
func (e *Executor) Handle(name string, h Handler) {
	if err := e.register(name, h); err != nil {
		panic(err)
	}
}

// HandleFunc registers f to run the jobs whose handler name is name, like
// [Executor.Handle].
func (e *Executor) HandleFunc(name string, f func(ctx context.Context, job *Job) error) {
	if f == nil {
		panic(fmt.Errorf("sdk: HandleFunc %q: nil handler", name))
	}
	if err := e.register(name, HandlerFunc(f)); err != nil {
		panic(err)
	}
}

// register is the error-returning core of Handle. The error names the
// caller's file and line.
func (e *Executor) register(name string, h Handler) error {
	where := ""
	if _, file, line, ok := runtime.Caller(2); ok {
		where = fmt.Sprintf(" (at %s:%d)", filepath.Base(file), line)
	}
	if name == "" {
		return fmt.Errorf("sdk: Handle: empty handler name%s", where)
	}
	if h == nil {
		return fmt.Errorf("sdk: Handle %q: nil handler%s", name, where)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.handlers[name]; ok {
		return fmt.Errorf("sdk: Handle %q: a handler is already registered under that name%s", name, where)
	}
	e.handlers[name] = h
	return nil
}

// Use appends middleware that wraps every handler, scripts included, from
// the next run on. The first middleware is the outermost: with Use(a, b),
// a run goes through a, then b, then the handler. The executor recovers
// panics itself, outside all middleware.
func (e *Executor) Use(mw ...Middleware) {
	for _, m := range mw {
		if m == nil {
			panic("sdk: Use: nil middleware")
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.middleware = append(e.middleware, mw...)
}

// Observe adds observers of the executor's runs (see [Observer]), called
// in order. Call it before [Executor.Serve]: a Serve under way keeps the
// observers it started with.
func (e *Executor) Observe(obs ...Observer) {
	for _, o := range obs {
		if o == nil {
			panic("sdk: Observe: nil observer")
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.observers = append(e.observers, obs...)
}

// Stats returns a snapshot of the executor's backlog: its queued runs and
// its unreported results are zero while it does not serve.
func (e *Executor) Stats() Stats {
	st := Stats{ReportFailures: e.reportFailures.Load()}
	if s := e.stats.Load(); s != nil {
		st.RunsQueued, st.ResultsUnreported = s.d.Queued(), s.sp.Unacked()
	}
	return st
}

func (e *Executor) lookup(name string) (Handler, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	h, ok := e.handlers[name]
	return h, ok
}

// observing returns the observers a Serve starts with.
func (e *Executor) observing() observers {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return slices.Clone(e.observers)
}

// prepare is the runner's PrepareFunc: r's handler with the middleware
// registered now, and the Job it gets.
func (e *Executor) prepare(r *runner.Run) runner.Call {
	return &call{
		job: Job{
			RunID:       r.ID,
			JobID:       r.JobID,
			Name:        r.Name,
			Param:       r.Param,
			ShardIndex:  r.ShardIndex,
			ShardTotal:  r.ShardTotal,
			ScheduledAt: r.ScheduledAt,
			Attempt:     r.Attempt,
			Inputs:      r.Inputs,
			log:         r.Log,
			outputs:     &outputs{},
		},
		handler: e.wrap(r.Handler.(Handler)),
	}
}

// call is a run's call of its handler (runner.Call), with the Job it gets.
type call struct {
	job     Job
	handler Handler
}

// Call calls the handler.
func (c *call) Call(ctx context.Context) error { return c.handler.ServeJob(ctx, &c.job) }

// Outputs returns what the handler published (runner.Publisher).
func (c *call) Outputs() map[string]string { return c.job.Outputs() }

func (e *Executor) wrap(h Handler) Handler {
	e.mu.RLock()
	defer e.mu.RUnlock()
	for i := len(e.middleware) - 1; i >= 0; i-- {
		h = e.middleware[i](h)
	}
	return h
}

// Run listens on [Config].Listen and calls [Executor.Serve]. It returns
// nil once ctx has ended and the executor has stopped, or an error if it
// cannot listen or serve.
func (e *Executor) Run(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", e.cfg.Listen)
	if err != nil {
		return fmt.Errorf("sdk: listen: %w", err)
	}
	return e.Serve(ctx, ln)
}

// Serve runs the executor on ln, which it closes before it returns, until
// ctx ends (with a nil ln, it serves only through [Executor.Handler]):
//
//  1. It serves the ExecutorService on ln over HTTP/1.1 and h2c (cleartext
//     HTTP/2), so the admin can use the Connect, gRPC or gRPC-Web protocol.
//  2. It registers with the admin at once, then every
//     [Config].HeartbeatInterval. When [Config].AdvertiseURL is empty, the
//     address it registers is derived from ln.Addr(). Each call of Serve
//     registers under a new random instance id, so the admin can tell a
//     restarted executor at the same address from the one before.
//  3. It reports results as runs end, and retries those no admin took,
//     including results a previous process left in [Config].LogDir.
//  4. It deletes run logs older than [Config].LogRetention, every hour.
//
// When ctx ends, Serve stops gracefully: it refuses new runs (unavailable)
// and drops queued ones (reported KILLED with [ErrShuttingDown]),
// deregisters, waits up to [Config].ShutdownTimeout for running runs,
// cancels those still running (reported KILLED) and waits briefly for their
// handlers, stops serving, and spends up to ShutdownTimeout delivering the
// results the admin has not taken; those it cannot deliver stay on disk for
// the next start. Serve returns nil after a stop caused by ctx, or the error
// that stopped the server. Only one Run or Serve may run at a time on an
// Executor; another call returns [ErrAlreadyRunning].
func (e *Executor) Serve(ctx context.Context, ln net.Listener) error {
	closeLn := func() {
		if ln != nil {
			_ = ln.Close()
		}
	}
	if !e.running.CompareAndSwap(false, true) {
		closeLn()
		return ErrAlreadyRunning
	}
	defer e.running.Store(false)

	cfg := e.cfg
	address := cfg.AdvertiseURL
	switch {
	case address != "":
	case ln == nil:
		return fmt.Errorf("%w: AdvertiseURL is required to Serve without a listener", ErrInvalidConfig)
	default:
		var err error
		if address, err = advertiseURL(ln.Addr()); err != nil {
			closeLn()
			return err
		}
	}
	instance := newInstanceID()
	log := cfg.Logger.With("app", cfg.AppName, "address", address)
	sp, err := report.OpenSpool(filepath.Join(cfg.LogDir, "results"), log)
	if err != nil {
		closeLn()
		return fmt.Errorf("sdk: open log dir: %w", err)
	}
	logs, err := runlog.Open(filepath.Join(cfg.LogDir, "runs"), cfg.NowFunc)
	if err != nil {
		closeLn()
		return fmt.Errorf("sdk: open log dir: %w", err)
	}
	adm := newAdmins(cfg.AdminURLs, cfg.HTTPClient, cfg.AccessToken, instance)
	rep := report.NewReporter(sp, adm.reportResults, log)
	rep.Failures = &e.reportFailures
	adm.answered = rep.AdminAnswered // a heartbeat that gets through ends the results' backoff
	d := runner.New(runner.Config{
		Logs:            logs,
		NowFunc:         cfg.NowFunc,
		Logger:          log,
		ReportFunc:      rep.Add,
		ReportBatchFunc: rep.AddAll,
		SpoolFunc:       rep.SpoolAll,
		QueueFunc:       rep.QueueAll,
		PrepareFunc:     e.prepare,
		ScriptsEnabled:  cfg.ScriptsEnabled,
		IdleTimeout:     runner.IdleTimeoutDefault,
		AbandonAfter:    runner.AbandonAfterDefault,
		Observer:        e.observing(),
	})
	d.Remember(sp.Keys()) // runs an earlier process ended and had not reported yet
	svc := &service{d: d, lookup: e.lookup, scriptDir: filepath.Join(cfg.LogDir, "scripts"), instanceID: instance, spooled: sp.Has, sentBy: adm.sentBy}
	h := newServiceHandler(svc, cfg.AccessToken, cfg.Interceptors)
	e.serving.Store(&h)
	e.stats.Store(&servingStats{d: d, sp: sp})
	defer e.stats.Store(nil)

	if cfg.AccessToken == "" {
		log.Warn("sdk: no access token: anyone who can reach this executor can run its handlers")
	}
	base := context.WithoutCancel(ctx)
	sendCtx, cancelSends := context.WithCancel(base)
	defer cancelSends()
	stopReporter := make(chan struct{})
	cleanCtx, stopCleaner := context.WithCancel(base)
	hbCtx, stopHB := context.WithCancel(base)
	var bg, hb sync.WaitGroup
	bg.Go(func() { rep.Run(sendCtx, stopReporter) })
	bg.Go(func() { runlog.CleanLoop(cleanCtx, logs, cfg.LogRetention, log) })
	hb.Go(func() { heartbeat(hbCtx, adm, cfg.AppName, address, instance, cfg.HeartbeatInterval, log) })
	var srv *http.Server
	var served chan error // stays nil, never ready, without a listener
	if ln != nil {
		srv = newHTTPServer(h, log)
		served = make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
	}
	log.Info("sdk: executor serving", "admins", cfg.AdminURLs, "instance_id", instance)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
		serveErr = fmt.Errorf("sdk: serve: %w", serveErr)
	}

	// Graceful stop, in order.
	d.StopAccepting()
	stopHB()
	hb.Wait()
	dctx, cancel := context.WithTimeout(base, adminCallTimeout)
	if err := adm.deregister(dctx, cfg.AppName, address); err != nil {
		log.Warn("sdk: deregister", "err", err)
	}
	cancel()
	dctx, cancel = context.WithTimeout(base, cfg.ShutdownTimeout)
	d.Drain(dctx)
	cancel()
	if err := logs.Close(); err != nil {
		log.Warn("sdk: close run logs", "err", err)
	}
	e.serving.Store(nil)
	if srv != nil {
		sctx, cancel := context.WithTimeout(base, readHeaderTimeout)
		if err := srv.Shutdown(sctx); err != nil {
			_ = srv.Close()
		}
		cancel()
	}
	// The reporter finishes a call under way, within the flush's time, so
	// that flush does not send its results again.
	fctx, cancel := context.WithTimeout(base, cfg.ShutdownTimeout)
	stopSends := context.AfterFunc(fctx, cancelSends)
	close(stopReporter)
	stopCleaner()
	bg.Wait()
	stopSends()
	if err := rep.Flush(fctx); err != nil {
		log.Warn("sdk: results kept on disk until the next start", "results", rep.Pending(), "dir", sp.Dir, "err", err)
	}
	cancel()
	if err := sp.Close(); err != nil {
		log.Warn("sdk: close result spool", "err", err)
	}
	if e.ownClient {
		cfg.HTTPClient.CloseIdleConnections()
	}
	log.Info("sdk: executor stopped")
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// newServiceHandler serves svc, checking the access token when there is
// one; interceptors, if any, see the calls first (outside the token's
// check).
func newServiceHandler(svc *service, token string, interceptors []connect.Interceptor) http.Handler {
	// Small responses (most: RunBatch outcomes, beats) are not worth gzip.
	opts := []connect.HandlerOption{connect.WithReadMaxBytes(readMaxBytes), connect.WithCompressMinBytes(4 << 10)}
	if len(interceptors) > 0 {
		opts = append(opts, connect.WithInterceptors(interceptors...))
	}
	if token != "" {
		opts = append(opts, connect.WithInterceptors(requireBearer(token)))
	}
	mux := http.NewServeMux()
	mux.Handle(carillonv1connect.NewExecutorServiceHandler(svc, opts...))
	return mux
}

// newHTTPServer serves h over HTTP/1.1 and h2c.
func newHTTPServer(h http.Handler, log *slog.Logger) *http.Server {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{
		Handler:           h,
		Protocols:         p,
		ReadHeaderTimeout: readHeaderTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		IdleTimeout:       idleConnTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// Handler returns the URL path prefix and the HTTP handler of the
// executor's ExecutorService, to mount on a server of your own instead of
// the one [Executor.Serve] runs on its listener:
//
//	mux.Handle(ex.Handler())
//	go ex.Serve(ctx, nil) // no listener: set Config.AdvertiseURL to your server's URL
//
// The handler works while a Serve or Run call is serving, with or without a
// listener, and checks the access token; at other times it refuses calls as
// unavailable. For the admin's gRPC calls, your server must speak HTTP/2
// (h2c or TLS).
func (e *Executor) Handler() (string, http.Handler) {
	return "/" + carillonv1connect.ExecutorServiceName + "/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := e.serving.Load()
		if h == nil {
			_ = e.errorWriter.Write(w, r, connect.NewError(connect.CodeUnavailable, errNotServing))
			return
		}
		(*h).ServeHTTP(w, r)
	})
}

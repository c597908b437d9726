package trigger

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	"go.opentelemetry.io/otel/trace"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/route"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
)

const (
	// ExecutorTTLDefault is how long an executor stays live after its last heartbeat.
	ExecutorTTLDefault = 90 * time.Second
	// DispatchTimeoutDefault bounds one ExecutorService.Run call.
	DispatchTimeoutDefault = 10 * time.Second
	// MaxInFlightDefault bounds the dispatches running at once.
	MaxInFlightDefault = 256
	// SendAheadDefault is the default Config.SendAhead: long enough to send
	// a burst of 10,000 fires of one instant to executors on two cores
	// before it (about 100 ms of calls), short enough that few runs are
	// sent ahead when a job is stopped or the admin dies.
	SendAheadDefault = 300 * time.Millisecond
	// SendAheadPerRun is how much earlier than SendAhead the runs of an
	// instant are sent for each run due on it: a burst of n runs is sent
	// SendAhead + n×SendAheadPerRun before its instant (SendLead), so
	// that its calls are made and its runs accepted by their executors
	// before it (on two cores, 100,000 runs take about 1.5 s of calls and
	// accepts; BENCHMARKS.md, issue 20).
	SendAheadPerRun = 20 * time.Microsecond
)

// SendLead is how long before their instant the n runs due on it are sent
// to executors that take due_at, with sendAhead the Config's SendAhead.
func SendLead(sendAhead time.Duration, n int) time.Duration {
	return sendAhead + time.Duration(n)*SendAheadPerRun
}

// Config configures a Trigger.
type Config struct {
	// Store holds jobs and runs. Required.
	Store *store.Store
	// Token is the global executor access token, sent to executors as
	// "Authorization: Bearer <token>" (empty sends none), except to the
	// executors of groups with their own token (Store.GroupTokens), which
	// get theirs.
	Token string
	// HTTPClient calls executors. Defaults to a client with keep-alive
	// connections tuned for many small calls.
	HTTPClient *http.Client
	// TLSClientConfig is the default HTTPClient's TLS configuration for
	// executors served over https: set RootCAs to trust a private CA.
	// Ignored when HTTPClient is set. Defaults to nil: the system's roots.
	TLSClientConfig *tls.Config
	// ExecutorTTL defaults to ExecutorTTLDefault.
	ExecutorTTL time.Duration
	// DispatchTimeout defaults to DispatchTimeoutDefault.
	DispatchTimeout time.Duration
	// MaxInFlight defaults to MaxInFlightDefault.
	MaxInFlight int
	// SendAhead is how long before its instant a scheduled fire's runs are
	// sent to executors that start runs at their RunRequest.due_at
	// (CAPABILITY_DUE_AT): they start each on its instant by their own
	// clock, so that a burst of fires due on one instant does not wait for
	// its calls. Runs for other executors are sent on the instant. A
	// burst is sent earlier, by SendAheadPerRun for each of its runs
	// (SendLead). The fires must be handed to Fire at least that long
	// before their instant (schedule.Config.FireAhead and
	// FireAheadPerFire). Negative sends every run on its instant. Defaults
	// to SendAheadDefault.
	SendAhead time.Duration
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock is the trigger's time (see Clock). Defaults to the machine's.
	Clock Clock
	// FollowUp decides what follows a settled run: retries, alarms, child
	// jobs, FIX_DELAY's next fire. Defaults to followup.Policy{}.
	FollowUp store.Policy
	// Queue takes what settling runs makes due: the scheduler. Required.
	Queue Queue
	// Started is when this admin process started. Defaults to Clock.Now() at
	// New.
	Started time.Time
	// LastBeat is the newest executor heartbeat in the store when the admin
	// started (store.LastBeat): about when the previous admin process
	// stopped hearing executors. Until a heartbeat period has passed since
	// Started, executors live then count as live, so an admin outage does
	// not make live executors lost.
	LastBeat time.Time
	// Metrics counts dispatches, their lateness and settled runs. Defaults
	// to nil: nothing is counted.
	Metrics *metrics.Metrics
	// TracerProvider, if set, traces each fire with a span "carillon.fire"
	// from its call's preparation to its dispatch, whose W3C context goes
	// to the executor in RunRequest.trace_context, and traces the calls to
	// executors (otelconnect). Defaults to nil: no spans, no interceptor.
	TracerProvider trace.TracerProvider
	// LastRunID is the largest run ID when the admin started
	// (store.MaxRunID): runs up to it were claimed by earlier admin
	// processes, and Reconcile settles those they may not have sent.
	LastRunID int64
}

// Queue is where the fires that settling runs makes go: the scheduler's
// side of the trigger. The scheduler hands fires to the trigger through
// its own interface, schedule.Dispatcher.
type Queue interface {
	// Enqueue queues pending runs that settling created (retries, child
	// jobs' runs) to fire at their DueAt.
	Enqueue(runs ...store.Run)
	// Wake asks for a scan now: settling gave a FIX_DELAY job its next
	// fire.
	Wake()
}

// Trigger dispatches fires. It is safe for concurrent use.
type Trigger struct {
	cfg        Config
	clock      Clock
	tracer     trace.Tracer // nil when not tracing
	executors  *executors
	strategies map[carillonv1.RouteStrategy]route.Strategy
	fast, slow *pool
	slowJobs   slowJobs
	wg         inflight
	// The three writes of the fire path, each coalesced: claims of due
	// runs, records of dispatches, results from executors.
	writer       writer
	claimWrites  *coalescer[schedule.Entry]
	recordWrites *coalescer[store.Dispatch]
	resultWrites *coalescer[store.Result]
	// deferred holds the dispatches of scheduled fires until their
	// results come, to be recorded with them.
	deferred *deferredRecords

	sourcesMu sync.Mutex
	sources   map[int64]cachedSource // by group ID

	tokens *auth.ExecutorTokens

	// killing holds the runs of XXL_JOB groups being killed (Kill) until
	// they are settled: any result of one is taken as KILLED.
	killing sync.Map // run ID -> struct{}

	heard heard // what executors' heartbeats said (heartbeat.go)

	restartsMu sync.Mutex
	restarts   map[string]time.Time // executor addresses whose process restarted, and when it registered
	manual     manualProbes         // executors of MANUAL groups that hold runs
	watch      heldWatch            // the running runs not held ACTIVE by their executors (held_watch.go)
	refused    refusals             // executors that refused a connection lately (reroute.go)
}

// ExecutorTokens returns the executor access tokens the trigger sends,
// which the admin's RegistryService checks: update them (Set) when a
// group's token changes.
func (t *Trigger) ExecutorTokens() *auth.ExecutorTokens { return t.tokens }

// New returns a Trigger.
func New(cfg Config) (*Trigger, error) {
	cfg.ExecutorTTL = cmp.Or(cfg.ExecutorTTL, ExecutorTTLDefault)
	cfg.DispatchTimeout = cmp.Or(cfg.DispatchTimeout, DispatchTimeoutDefault)
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, MaxInFlightDefault)
	cfg.SendAhead = cmp.Or(cfg.SendAhead, SendAheadDefault)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.Clock == nil {
		cfg.Clock = wallClock{}
	}
	if cfg.FollowUp == nil {
		cfg.FollowUp = followup.Policy{}
	}
	if cfg.Started.IsZero() {
		cfg.Started = cfg.Clock.Now()
	}
	var traced connect.Interceptor
	if cfg.TracerProvider != nil {
		var err error
		if traced, err = otelconnect.NewInterceptor(otelconnect.WithTracerProvider(cfg.TracerProvider),
			otelconnect.WithPropagator(traceContext), otelconnect.WithoutMetrics()); err != nil {
			return nil, fmt.Errorf("trigger: tracing: %w", err)
		}
	}
	tokens := auth.NewExecutorTokens(cfg.Token)
	groupTokens, err := cfg.Store.GroupTokens(context.Background())
	if err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	tokens.Set(groupTokens)
	t := &Trigger{
		cfg:        cfg,
		clock:      cfg.Clock,
		tokens:     tokens,
		executors:  newExecutors(cfg.HTTPClient, cfg.TLSClientConfig, tokens, traced),
		restarts:   map[string]time.Time{},
		strategies: map[carillonv1.RouteStrategy]route.Strategy{},
		sources:    map[int64]cachedSource{},
		fast:       newPool("fast", cfg.MaxInFlight),
		slow:       newPool("slow", max(cfg.MaxInFlight/2, 1)),
	}
	t.executors.groupOf = t.groupOf
	if cfg.TracerProvider != nil {
		t.tracer = cfg.TracerProvider.Tracer(tracerName)
	}
	for v, name := range carillonv1.RouteStrategy_name {
		if v == 0 {
			continue
		}
		s, err := route.New(strings.TrimPrefix(name, "ROUTE_STRATEGY_"), t.executors)
		if err != nil {
			return nil, fmt.Errorf("trigger: %w", err)
		}
		t.strategies[carillonv1.RouteStrategy(v)] = s
	}
	t.strategies[carillonv1.RouteStrategy_ROUTE_STRATEGY_UNSPECIFIED] = t.strategies[carillonv1.RouteStrategy_ROUTE_STRATEGY_FIRST]
	if t.cfg.Queue == nil {
		return nil, errors.New("trigger: Config.Queue is required")
	}
	// Claims first, at once: fires wait for nothing else. Records and
	// results linger a little to share transactions, and a batch of them
	// holds the writer for a few milliseconds at most.
	t.writer = writer{wg: &t.wg, now: time.Now, wake: make(chan struct{}, 1)}
	t.claimWrites = newCoalescer(&t.writer, "claim", batchMax, 0, t.claimPending)
	t.recordWrites = newCoalescer(&t.writer, "record", batchMax, recordLinger, t.recordNow)
	t.resultWrites = newCoalescer(&t.writer, "result", batchMax, resultLinger, t.settleNow)
	t.deferred = newDeferredRecords(t.recordLater, cfg.Clock)
	return t, nil
}

const (
	// writeTimeout bounds one coalesced write.
	writeTimeout = 30 * time.Second
	// recordLinger is how long a dispatch record may wait for others to
	// share its transaction (TriggerJob waits for it).
	recordLinger = 5 * time.Millisecond
	// resultLinger is the same for results; executors wait for it. It is
	// longer than recordLinger, so that a run's dispatch is usually
	// recorded before its result settles it (the "run finished" line then
	// names its executor).
	resultLinger = 10 * time.Millisecond
)

// batchMax bounds the runs one dispatch batch handles: one job query, one
// RunBatch call per executor, and about the fires one claim takes.
const batchMax = 256

// WriteQueue returns how many runs wait in each lane of the fire path's
// coalesced writes: "claim" (pending runs to claim), "record" (dispatches
// to record), "result" (results to settle).
func (t *Trigger) WriteQueue() map[string]int { return t.writer.queued() }

// Wait waits for every dispatch started by Fire, and every write queued, to
// finish, recording the dispatches still waiting for their results.
func (t *Trigger) Wait() {
	t.wg.Wait()
	t.deferred.flushAll()
	t.wg.Wait()
}

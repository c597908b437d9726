package trigger

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	"go.opentelemetry.io/otel/trace"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/followup"
	"github.com/carillonhq/carillon/admin/internal/metrics"
	"github.com/carillonhq/carillon/admin/internal/schedule"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/internal/clock"
)

const (
	// ExecutorTTLDefault is how long an executor stays live after its last heartbeat.
	ExecutorTTLDefault = 90 * time.Second
	// DispatchTimeoutDefault bounds one ExecutorService.Run call.
	DispatchTimeoutDefault = 10 * time.Second
	// MaxInFlightDefault bounds the dispatches running at once.
	MaxInFlightDefault = 256
	// SendAheadDefault is the default Config.SendAhead: long enough to send
	// a burst of thousands of runs of one instant to executors before it,
	// short enough that few runs are sent ahead when a job is stopped or
	// the admin dies.
	SendAheadDefault = 300 * time.Millisecond
	// SendAheadPerRun is how much earlier than SendAhead the runs of an
	// instant are sent for each run due on it: a burst of n runs is sent
	// SendAhead + n×SendAheadPerRun before its instant (SendLead), so
	// that its calls are made and its runs accepted by their executors
	// before it (BENCHMARKS.md, issue 20, measures what a burst takes).
	SendAheadPerRun = 20 * time.Microsecond
	// GatherInstants is how close together the instants of a dispatch
	// batch must lie to be sent as one (instant.send): an every-second
	// load spread over the milliseconds of a second has a fire or a few
	// on each, and each instant's own goroutine, route, call, sleeps and
	// waits cost the admin more than its fires did (about nine goroutine
	// wake-ups a fire at 1,024 FIX_RATE jobs, and a wake-up from idle
	// costs a few hundred µs of CPU on a virtual machine). Gathered, the
	// runs of the later instants are sent ahead up to GatherInstants
	// earlier, each still due on its own instant; calls to executors that
	// do not take due_at are still made on each instant. The scheduler
	// hands the fires over gathered as much (schedule.Config.FireGather).
	// One admin over PostgreSQL at 1,024 FIX_RATE fires/s: 25 ms, 18 % of
	// a core; 100 ms, 13 % (BENCHMARKS.md, "thirteenth steps").
	GatherInstants = 100 * time.Millisecond
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
	// executors of groups with their own token (GroupStore.Tokens), which
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
	// MisfireThreshold is how late after its instant a scheduled fire may
	// be sent: one the dispatcher reaches later (the admin overloaded) is
	// a misfire (overdue.go). Defaults to schedule.MisfireThresholdDefault.
	MisfireThreshold time.Duration
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
	// Clock is the trigger's time (see clock.go). Defaults to clock.Wall.
	Clock clock.Clock
	// FollowUp decides what follows a settled run: retries, alarms, child
	// jobs, FIX_DELAY's next fire. Defaults to followup.Policy{}.
	FollowUp store.Policy
	// Queue takes what settling runs makes due: the scheduler. Required.
	Queue Queue
	// Alarms is told when settling runs made alarms due (alarm.Sender),
	// so that it sends them now rather than at its next look. Defaults to
	// nil: the alarms wait for it to look.
	Alarms Alarms
	// Started is when this admin process started. Defaults to Clock.Now() at
	// New.
	Started time.Time
	// LastBeat is the newest executor heartbeat in the store when the admin
	// started (store.RegistryStore.LastBeat): about when the previous admin process
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
	// Unsent are the runs earlier admin processes claimed and did not
	// record as sent, read when the admin started, before it claimed
	// anything (store.RunStore.UnsentIDs): Reconcile settles them. Not an ID
	// bound: the pending runs an earlier process made (retries, child
	// jobs' and workflow nodes' runs) are this process's to claim and
	// send, and must not be taken for the earlier process's claims.
	Unsent []int64
}

// Queue is where the fires that settling runs makes go: the scheduler's
// side of the trigger. The scheduler hands fires to the trigger through
// its own interface, schedule.Dispatcher, which the Dispatcher implements.
type Queue interface {
	// Enqueue queues pending runs that settling created (retries, child
	// jobs' runs) to fire at their DueAt.
	Enqueue(runs ...store.Run)
	// Wake asks for a scan now: settling gave a FIX_DELAY job its next
	// fire.
	Wake()
}

// Alarms sends the alarms that settling runs decides (alarm.Sender). The
// decision is stored with the run, in the transaction that settles it: a
// crash never loses an alarm; Wake only makes it prompt.
type Alarms interface {
	// Wake asks for the due alarms to be sent now.
	Wake()
}

// Trigger is the fire path's four stages, built together over one
// configuration: see the package documentation. Each is safe for
// concurrent use.
type Trigger struct {
	// Dispatcher claims, routes and sends fires (Fire, TriggerJob).
	Dispatcher *Dispatcher
	// Completer records dispatches and settles results (Settle).
	Completer *Completer
	// Rescuer settles the runs whose result will not come (Monitor,
	// Reconcile).
	Rescuer *Rescuer
	// Gateway calls executors (ReadLog, Kill, HeldRuns).
	Gateway *Gateway

	router *router
	work   *inflight
	writer *writer
}

// New returns a Trigger.
func New(cfg Config) (*Trigger, error) {
	if cfg.Queue == nil {
		return nil, errors.New("trigger: Config.Queue is required")
	}
	cfg.ExecutorTTL = cmp.Or(cfg.ExecutorTTL, ExecutorTTLDefault)
	cfg.DispatchTimeout = cmp.Or(cfg.DispatchTimeout, DispatchTimeoutDefault)
	cfg.MisfireThreshold = cmp.Or(cfg.MisfireThreshold, schedule.MisfireThresholdDefault)
	cfg.MaxInFlight = cmp.Or(cfg.MaxInFlight, MaxInFlightDefault)
	cfg.SendAhead = cmp.Or(cfg.SendAhead, SendAheadDefault)
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	if cfg.Clock == nil {
		cfg.Clock = clock.Wall
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
	groupTokens, err := cfg.Store.Groups.Tokens(context.Background())
	if err != nil {
		return nil, fmt.Errorf("trigger: %w", err)
	}
	tokens.Set(groupTokens)
	c := &cfg
	work := &inflight{}
	// The fire path's writes, one at a time in order of priority: claims
	// first, at once, since fires wait for nothing else. Records and
	// results linger a little to share transactions.
	w := &writer{wg: work, now: time.Now, wake: make(chan struct{}, 1)}
	gw := newGateway(c, tokens, traced)
	rt, err := newRouter(c, gw)
	if err != nil {
		return nil, err
	}
	gw.groups = rt.groupOf
	d := newDispatcher(c, w, work, rt, gw) // claims go first of the writer's lanes
	done := newCompleter(c, w, work)
	d.completer = done
	r := &Rescuer{cfg: c, gateway: gw, router: rt, dispatcher: d, completer: done, restarts: map[string]time.Time{}}
	if len(c.Unsent) > 0 {
		r.earlier.Store(&c.Unsent)
	}
	return &Trigger{Dispatcher: d, Completer: done, Rescuer: r, Gateway: gw, router: rt, work: work, writer: w}, nil
}

// ExecutorTokens returns the executor access tokens the trigger sends,
// which the admin's RegistryService checks: update them (Set) when a
// group's token changes.
func (t *Trigger) ExecutorTokens() *auth.ExecutorTokens { return t.Gateway.tokens }

// Registered is told of each executor registration: the instance (process)
// that registered at address, and the one that registered there before.
// An executor that refused a connection may be picked again from then on
// (the router's refusals); a restart on the same address is the Rescuer's
// to follow up (Rescuer.restarted).
func (t *Trigger) Registered(address, instance, previous string) {
	t.router.refused.beat(address)
	t.Rescuer.restarted(address, instance, previous)
}

// Kill asks the executor run r was sent to to kill it (Gateway.Kill). For
// a run of an XXL_JOB group, from the call on until the run is settled, a
// result of r is taken as KILLED (Completer): xxl-job executors report a
// killed run as a normal result (xxl-job-executor-go as SUCCEEDED), which
// may come before the caller settles the run KILLED. Carillon executors
// report KILLED themselves. A run whose dispatch is not recorded yet (its
// call just made, or under way) goes to the executor its route names: its
// handler may have started already. A run sent nowhere is left alone (nil).
func (t *Trigger) Kill(ctx context.Context, r store.Run) error {
	address := cmp.Or(r.ExecutorAddress, t.Completer.SentTo(r.ID))
	if address == "" {
		routed, err := t.Completer.cfg.Store.Runs.Results(ctx, []int64{r.ID})
		if err != nil {
			return err
		}
		address = routed[r.ID].Address
	}
	if address == "" {
		return nil
	}
	xxl := t.Gateway.speaksXXL(ctx, r.GroupID)
	if xxl {
		t.Completer.killing.Store(r.ID, struct{}{})
	}
	err := t.Gateway.Kill(ctx, r, address)
	if err != nil && xxl {
		t.Completer.killing.Delete(r.ID)
	}
	return err
}

// WriteQueue returns how many runs wait in each lane of the fire path's
// coalesced writes: "route" (routes to record before calls), "claim"
// (pending runs to claim), "route-ahead" (routes of fires sent ahead, not
// soon), "record" (dispatches to record), "result" (results to settle).
func (t *Trigger) WriteQueue() map[string]int { return t.writer.queued() }

// Wait waits for every dispatch started by the Dispatcher, and every write
// queued, to finish, recording the dispatches still waiting for their
// results.
func (t *Trigger) Wait() {
	t.work.Wait()
	t.Completer.deferred.flushAll()
	t.work.Wait()
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
	// names its executor), and longer still because a settle is the
	// heaviest write of a run: at 5,000 FIX_RATE fires a second, 50 ms
	// rather than 10 ms (with resultBatchMax) makes a third fewer write
	// transactions and costs ~7 % less admin CPU a fire (BENCHMARKS.md,
	// "ninth steps"). A lone result after a quiet spell is not held
	// (lingerIdle).
	resultLinger = 50 * time.Millisecond
	// resultBatchMax bounds the results one settle takes: more than
	// batchMax, as a burst's results come several claim batches at once.
	// Claims still go first: a claim waits for at most one settle.
	resultBatchMax = 4 * batchMax
)

// batchMax bounds the runs one dispatch batch handles: one job query, one
// RunBatch call per executor, and about the fires one claim takes.
const batchMax = 256

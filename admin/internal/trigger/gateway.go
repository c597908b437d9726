package trigger

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/carillonhq/carillon/admin/internal/auth"
	"github.com/carillonhq/carillon/admin/internal/store"
	"github.com/carillonhq/carillon/admin/internal/xxljob"
	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// Gateway is the admin's side of every call to executors: one client per
// executor address and group, a Connect client for Carillon executors and
// an xxljob.Client for the executors of XXL_JOB groups. It is the only
// caller of ExecutorServiceClients. Every call names the group it is for,
// whose protocol it speaks and whose executor token it carries: no
// credential ever goes to an address that did not come from a group's
// executors. It is safe for concurrent use.
type Gateway struct {
	cfg    *Config
	http   *http.Client
	tokens *auth.ExecutorTokens
	traced connect.Interceptor // traces the calls; nil when not tracing
	// groups returns a group as the router's cache has it, false if it
	// cannot be read.
	groups func(ctx context.Context, id int64) (store.Group, bool)

	mu      sync.Mutex
	clients map[target]carillonv1connect.ExecutorServiceClient
	xxl     map[target]*xxljob.Client
	// noBatch holds the executors that answered RunBatch unimplemented,
	// with when they did.
	noBatch map[string]time.Time
	// ahead holds the slots of each executor's calls sent ahead of their
	// instant (aheadCallsMax), by address.
	ahead map[string]chan struct{}
	// json are the executors called with JSON (codec.go).
	json jsonAddrs
}

// target is an executor address called for a group.
type target struct {
	address string
	group   int64
}

func newGateway(cfg *Config, tokens *auth.ExecutorTokens, traced connect.Interceptor) *Gateway {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			TLSClientConfig:     cfg.TLSClientConfig,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
			// A RunBatch call's headers and body leave in one write: with
			// the default 4 KiB, a batch of a dozen runs took three.
			WriteBufferSize: 64 << 10,
		}}
	}
	return &Gateway{cfg: cfg, http: client, tokens: tokens, traced: traced,
		clients: map[target]carillonv1connect.ExecutorServiceClient{}, xxl: map[target]*xxljob.Client{},
		noBatch: map[string]time.Time{}, ahead: map[string]chan struct{}{},
		groups: func(context.Context, int64) (store.Group, bool) { return store.Group{}, false }}
}

// client returns the client of the executor at address for calls for
// group: an xxljob.Client when it is an XXL_JOB group, else a Connect
// client carrying the group's token. ctx bounds reading the group.
func (g *Gateway) client(ctx context.Context, group int64, address string) carillonv1connect.ExecutorServiceClient {
	k := target{address, group}
	if g.speaksXXL(ctx, group) {
		g.mu.Lock()
		defer g.mu.Unlock()
		c, ok := g.xxl[k]
		if !ok {
			c = xxljob.NewClient(g.http, address, func(ctx context.Context) xxljob.Credentials {
				grp, _ := g.groups(ctx, group)
				return xxljob.Credentials{Token: g.tokens.ForGroup(group), AppName: grp.AppName}
			})
			g.xxl[k] = c
		}
		return c
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.clients[k]
	if !ok {
		interceptors := []connect.Interceptor{bearer(g.tokens, group)}
		if g.traced != nil {
			interceptors = append([]connect.Interceptor{g.traced}, interceptors...)
		}
		c = g.newCodecClient(address, connect.WithInterceptors(interceptors...))
		g.clients[k] = c
	}
	return c
}

// speaksXXL says whether group's executors are xxl-job executors.
func (g *Gateway) speaksXXL(ctx context.Context, group int64) bool {
	grp, ok := g.groups(ctx, group)
	return ok && grp.ExecutorProtocol == carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB
}

// bearer adds "Authorization: Bearer <token>" to each call, with group's
// token when it has one.
func bearer(tokens *auth.ExecutorTokens, group int64) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if token := tokens.ForGroup(group); token != "" {
				req.Header().Set("Authorization", "Bearer "+token)
			}
			return next(ctx, req)
		}
	}
}

// aheadCallsMax is how many calls sent ahead of their instant may be in
// flight to one executor at once. The batches of a burst all wake at its
// send time (SendLead), and each would otherwise prepare its requests and
// hold them while it waits for its call. Sixteen calls of up to batchMax
// runs keep an executor busy.
const aheadCallsMax = 16

// aheadSlot takes one of the slots of the executor at address for a call
// sent ahead of its instant, waiting as long as ctx lets it, and returns
// what gives it back. When ctx ends first, it takes none: the call then
// fails at once.
func (g *Gateway) aheadSlot(ctx context.Context, address string) (release func()) {
	g.mu.Lock()
	slots, ok := g.ahead[address]
	if !ok {
		slots = make(chan struct{}, aheadCallsMax)
		g.ahead[address] = slots
	}
	g.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }
	case <-ctx.Done():
		return func() {}
	}
}

// batchlessTTL is how long an executor that answered RunBatch
// unimplemented is sent one Run per run without asking again: an executor
// upgraded in place gets batches again after it.
const batchlessTTL = 10 * time.Minute

// batchless says the executor at address answered RunBatch unimplemented
// within batchlessTTL before now.
func (g *Gateway) batchless(address string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.noBatch[address]
	return ok && now.Sub(at) < batchlessTTL
}

// setBatchless remembers that the executor at address answered RunBatch
// unimplemented at now.
func (g *Gateway) setBatchless(address string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.noBatch[address] = now
}

// probeTimeout bounds one Beat or IdleBeat, so an executor that drops
// packets costs a FAILOVER or BUSYOVER fire seconds, not its whole deadline.
const probeTimeout = 3 * time.Second

// prober returns the route.Prober of group's executors.
func (g *Gateway) prober(group int64) prober { return prober{g, group} }

// prober asks a group's executors about themselves (route.Prober).
type prober struct {
	g     *Gateway
	group int64
}

// Beat implements route.Prober.
func (p prober) Beat(ctx context.Context, address string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := p.g.client(ctx, p.group, address).Beat(ctx, &carillonv1.BeatRequest{})
	return err
}

// IdleBeat implements route.Prober.
func (p prober) IdleBeat(ctx context.Context, address string, jobID int64) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res, err := p.g.client(ctx, p.group, address).IdleBeat(ctx, &carillonv1.IdleBeatRequest{JobId: jobID})
	if err != nil {
		return false, "", err
	}
	return res.Idle, res.Reason, nil
}

// ReadLog fetches a page of run r's log from the executor it was sent to.
// The request names this admin's database, so that an executor that also
// ran runs of another database with the same ID returns this one's log.
func (g *Gateway) ReadLog(ctx context.Context, r store.Run, fromLine int32) (*carillonv1.ReadLogResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.DispatchTimeout)
	defer cancel()
	return g.client(ctx, r.GroupID, r.ExecutorAddress).ReadLog(ctx, &carillonv1.ReadLogRequest{
		RunId: r.ID, FromLine: fromLine, DatabaseId: g.cfg.Store.DatabaseID(), ScheduledAt: timestamppb.New(r.ScheduledAt),
	})
}

// Kill asks the executor at address, which run r was sent to, to kill it,
// and only it, whether it is running, queued or waiting for its due_at
// there. The request also names the job: an executor that predates
// KillRequest.run_id ignores the run and kills every running and queued
// run of the job, as it always did.
func (g *Gateway) Kill(ctx context.Context, r store.Run, address string) error {
	ctx, cancel := context.WithTimeout(ctx, g.cfg.DispatchTimeout)
	defer cancel()
	_, err := g.client(ctx, r.GroupID, address).Kill(ctx, &carillonv1.KillRequest{
		JobId: r.JobID, RunId: r.ID, DatabaseId: g.cfg.Store.DatabaseID(),
	})
	return err
}

// errCannotAnswer says an executor does not serve HeldRuns (an SDK that
// predates it, or another implementation): it can never say which runs it
// holds.
var errCannotAnswer = errors.New("the executor cannot say which runs it holds (HeldRuns unimplemented)")

// heldAnswer is one executor's answer to "which of these runs do you
// hold?": the runs it holds, or why it did not answer.
type heldAnswer struct {
	address string
	held    map[int64]carillonv1.HeldRunState
	err     error          // errCannotAnswer, or the call's error
	asked   map[int64]bool // the runs asked about; nil: all those of the question
	unsure  map[int64]bool // runs the executor cannot tell about yet: ask again later
}

// heldRuns asks the executor at address which of runIDs, of group, it
// holds (ExecutorService.HeldRuns).
func (g *Gateway) heldRuns(ctx context.Context, group int64, address string, runIDs []int64) heldAnswer {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	a := heldAnswer{address: address}
	res, err := g.client(ctx, group, address).HeldRuns(ctx, &carillonv1.HeldRunsRequest{DatabaseId: g.cfg.Store.DatabaseID(), RunIds: runIDs})
	if connect.CodeOf(err) == connect.CodeUnimplemented {
		err = errCannotAnswer
	}
	if err != nil {
		a.err = err
		return a
	}
	a.held = make(map[int64]carillonv1.HeldRunState, len(res.GetRuns()))
	for _, r := range res.GetRuns() {
		a.held[r.GetRunId()] = r.GetState()
	}
	return a
}

// heldAt asks the executor at address which of runs it holds. Each
// group's runs are asked for that group (an address normally serves one
// group); the answers are merged, and an error of any ask is the
// answer's.
func (g *Gateway) heldAt(ctx context.Context, address string, runs []store.Run) heldAnswer {
	byGroup := map[int64][]int64{}
	for _, r := range runs {
		byGroup[r.GroupID] = append(byGroup[r.GroupID], r.ID)
	}
	merged := heldAnswer{address: address, held: map[int64]carillonv1.HeldRunState{}}
	for group, ids := range byGroup {
		a := g.heldRuns(ctx, group, address, ids)
		if a.err != nil {
			return a
		}
		maps.Copy(merged.held, a.held)
	}
	return merged
}

// xxlLogMissing is what an xxl-job executor's /log answers for a run it has
// no log file of: it never started the run.
const xxlLogMissing = "logFile not exists"

// xxlNoLogs is what xxl-job-executor-go's /log answers for any run when
// its program set no log handler ("the default answer: no LogHandler was
// set"): such an executor cannot say which runs it holds.
const xxlNoLogs = "说明没有设置LogHandler"

// xxlHeld is HeldRuns for an xxl-job executor of group, which has no such
// call: a run is held when the executor has its log file (/log: the run
// started there), and not held when it has none and the job is idle there
// (/idleBeat: nothing of the job running or queued). A run with no log
// whose job is busy there may be queued: it is unsure, and asked about
// again later. An executor whose /log answers the same for every run
// (xxlNoLogs) cannot answer.
func (g *Gateway) xxlHeld(ctx context.Context, group int64, address string, runs []store.Run) heldAnswer {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	a := heldAnswer{address: address, held: map[int64]carillonv1.HeldRunState{}}
	client := g.client(ctx, group, address)
	for _, run := range runs {
		// /idleBeat first: a job idle then had nothing queued, so a run
		// with no log after it never started; asked the other way round, a
		// run could start and end between the two answers.
		idle, err := client.IdleBeat(ctx, &carillonv1.IdleBeatRequest{JobId: run.JobID})
		if err != nil {
			a.err = err
			return a
		}
		page, err := client.ReadLog(ctx, &carillonv1.ReadLogRequest{RunId: run.ID,
			ScheduledAt: timestamppb.New(run.ScheduledAt), FromLine: 1})
		if err != nil {
			a.err = err
			return a
		}
		switch {
		case strings.Contains(page.GetContent(), xxlNoLogs):
			return heldAnswer{address: address, err: errCannotAnswer}
		case !strings.Contains(page.GetContent(), xxlLogMissing):
			a.held[run.ID] = carillonv1.HeldRunState_HELD_RUN_STATE_ACTIVE
		case !idle.GetIdle():
			if a.unsure == nil {
				a.unsure = map[int64]bool{}
			}
			a.unsure[run.ID] = true
		}
	}
	return a
}

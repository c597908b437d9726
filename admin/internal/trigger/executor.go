package trigger

import (
	"cmp"
	"context"
	"crypto/tls"
	"net"
	"net/http"
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

// executors keeps one client per executor address and protocol: a Connect
// client for Carillon executors, an xxljob.Client for the executors of
// XXL_JOB groups. It is the only caller of ExecutorServiceClients. A call
// carries an executor access token only when its context names the group
// it is for (forGroup), and then that group's token: no credential ever
// goes to an address that did not come from a group's executors. The
// group also says which protocol the call speaks.
type executors struct {
	http    *http.Client
	tokens  *auth.ExecutorTokens
	groupOf func(ctx context.Context, id int64) (store.Group, bool)
	traced  connect.Interceptor // traces the calls; nil when not tracing
	mu      sync.Mutex
	clients map[string]carillonv1connect.ExecutorServiceClient
	xxl     map[string]*xxljob.Client
	// noBatch holds the executors that answered RunBatch unimplemented,
	// with when they did.
	noBatch map[string]time.Time
	// ahead holds the slots of each executor's calls sent ahead of their
	// instant (aheadCallsMax), by address.
	ahead map[string]chan struct{}
}

// aheadCallsMax is how many calls sent ahead of their instant may be in
// flight to one executor at once. The batches of a burst all wake at its
// send time (SendLead), and each prepared its requests (about 400 bytes a
// run) and waited for its call: the 256 batches of the dispatch pool held
// 40 MB of requests for 100,000 runs. Sixteen calls of up to 256 runs keep
// an executor busy: 80,000 runs a second at 50 ms a call.
const aheadCallsMax = 16

// aheadSlot takes one of the slots of the executor at address for a call
// sent ahead of its instant, waiting as long as ctx lets it, and returns
// what gives it back. When ctx ends first, it takes none: the call then
// fails at once.
func (e *executors) aheadSlot(ctx context.Context, address string) (release func()) {
	e.mu.Lock()
	slots, ok := e.ahead[address]
	if !ok {
		slots = make(chan struct{}, aheadCallsMax)
		e.ahead[address] = slots
	}
	e.mu.Unlock()
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
func (e *executors) batchless(address string, now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	at, ok := e.noBatch[address]
	return ok && now.Sub(at) < batchlessTTL
}

// setBatchless remembers that the executor at address answered RunBatch
// unimplemented at now.
func (e *executors) setBatchless(address string, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.noBatch[address] = now
}

func newExecutors(client *http.Client, tlsConfig *tls.Config, tokens *auth.ExecutorTokens, traced connect.Interceptor) *executors {
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			TLSClientConfig:     tlsConfig,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	return &executors{http: client, tokens: tokens, traced: traced, clients: map[string]carillonv1connect.ExecutorServiceClient{},
		xxl: map[string]*xxljob.Client{}, noBatch: map[string]time.Time{}, ahead: map[string]chan struct{}{},
		groupOf: func(context.Context, int64) (store.Group, bool) { return store.Group{}, false }}
}

// client returns the client of the executor at address for a call with
// context ctx: an xxljob.Client when ctx names an XXL_JOB group
// (forGroup), else a Connect client.
func (e *executors) client(ctx context.Context, address string) carillonv1connect.ExecutorServiceClient {
	if id, ok := ctx.Value(groupKey{}).(int64); ok {
		if g, ok := e.groupOf(ctx, id); ok && g.ExecutorProtocol == carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB {
			return e.xxlClient(address)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.clients[address]
	if !ok {
		interceptors := []connect.Interceptor{bearer(e.tokens)}
		if e.traced != nil {
			interceptors = append([]connect.Interceptor{e.traced}, interceptors...)
		}
		c = carillonv1connect.NewExecutorServiceClient(e.http, address, connect.WithInterceptors(interceptors...))
		e.clients[address] = c
	}
	return c
}

// xxlClient returns the xxl-job client of the executor at address.
func (e *executors) xxlClient(address string) *xxljob.Client {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.xxl[address]
	if !ok {
		c = xxljob.NewClient(e.http, address, e.xxlCredentials)
		e.xxl[address] = c
	}
	return c
}

// xxlCredentials are the token and app name of the group ctx names.
func (e *executors) xxlCredentials(ctx context.Context) xxljob.Credentials {
	id, ok := ctx.Value(groupKey{}).(int64)
	if !ok {
		return xxljob.Credentials{}
	}
	g, _ := e.groupOf(ctx, id)
	return xxljob.Credentials{Token: e.tokens.ForGroup(id), AppName: g.AppName}
}

// probeTimeout bounds one Beat or IdleBeat, so an executor that drops
// packets costs a FAILOVER or BUSYOVER fire seconds, not its whole deadline.
const probeTimeout = 3 * time.Second

// Beat implements route.Prober.
func (e *executors) Beat(ctx context.Context, address string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := e.client(ctx, address).Beat(ctx, &carillonv1.BeatRequest{})
	return err
}

// IdleBeat implements route.Prober.
func (e *executors) IdleBeat(ctx context.Context, address string, jobID int64) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res, err := e.client(ctx, address).IdleBeat(ctx, &carillonv1.IdleBeatRequest{JobId: jobID})
	if err != nil {
		return false, "", err
	}
	return res.Idle, res.Reason, nil
}

// groupKey is the context key of the group a call to an executor is for.
type groupKey struct{}

// forGroup returns ctx for calls to executors of group id, the only calls
// that carry a credential: the group's executor token.
func forGroup(ctx context.Context, id int64) context.Context {
	return context.WithValue(ctx, groupKey{}, id)
}

// bearer adds "Authorization: Bearer <token>" to a call whose context
// names its group (forGroup), with that group's token; other calls carry
// none.
func bearer(tokens *auth.ExecutorTokens) connect.UnaryInterceptorFunc {
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if id, ok := ctx.Value(groupKey{}).(int64); ok {
				if token := tokens.ForGroup(id); token != "" {
					req.Header().Set("Authorization", "Bearer "+token)
				}
			}
			return next(ctx, req)
		}
	}
}

// ReadLog fetches a page of run r's log from the executor it was sent to.
// The request names this admin's database, so that an executor that also
// ran runs of another database with the same ID returns this one's log.
func (t *Trigger) ReadLog(ctx context.Context, r store.Run, fromLine int32) (*carillonv1.ReadLogResponse, error) {
	ctx, cancel := context.WithTimeout(forGroup(ctx, r.GroupID), t.cfg.DispatchTimeout)
	defer cancel()
	return t.executors.client(ctx, r.ExecutorAddress).ReadLog(ctx, &carillonv1.ReadLogRequest{
		RunId: r.ID, FromLine: fromLine, DatabaseId: t.cfg.Store.DatabaseID(), ScheduledAt: timestamppb.New(r.ScheduledAt),
	})
}

// Kill asks the executor run r was sent to to kill it, and only it,
// whether it is running, queued or waiting for its due_at there. The
// request also names the job: an executor that predates KillRequest.run_id
// ignores the run and kills every running and queued run of the job, as it
// always did. A run whose dispatch is not recorded yet (held until its
// result, see deferredRecords) is looked up there; a run sent nowhere is
// left alone (nil).
//
// For a run of an XXL_JOB group, from the call on until the run is
// settled, a result of r is taken as KILLED: xxl-job executors report a
// killed run as a normal result (xxl-job-executor-go as SUCCEEDED), which
// may come before the caller settles the run KILLED. Carillon executors
// report KILLED themselves.
func (t *Trigger) Kill(ctx context.Context, r store.Run) error {
	address := cmp.Or(r.ExecutorAddress, t.deferred.address(r.ID))
	if address == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(forGroup(ctx, r.GroupID), t.cfg.DispatchTimeout)
	defer cancel()
	if g, ok := t.groupOf(ctx, r.GroupID); ok && g.ExecutorProtocol == carillonv1.ExecutorProtocol_EXECUTOR_PROTOCOL_XXL_JOB {
		t.killing.Store(r.ID, struct{}{})
	}
	_, err := t.executors.client(ctx, address).Kill(ctx, &carillonv1.KillRequest{
		JobId: r.JobID, RunId: r.ID, DatabaseId: t.cfg.Store.DatabaseID(),
	})
	if err != nil {
		t.killing.Delete(r.ID)
	}
	return err
}

package trigger

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// executors keeps one Connect client per executor address. It is the only
// caller of the generated ExecutorServiceClient.
type executors struct {
	http    *http.Client
	token   string
	mu      sync.Mutex
	clients map[string]carillonv1connect.ExecutorServiceClient
	// noBatch holds the executors that answered RunBatch unimplemented,
	// with when they did.
	noBatch map[string]time.Time
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

func newExecutors(client *http.Client, tlsConfig *tls.Config, token string) *executors {
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			TLSClientConfig:     tlsConfig,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        1024,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		}}
	}
	return &executors{http: client, token: token, clients: map[string]carillonv1connect.ExecutorServiceClient{},
		noBatch: map[string]time.Time{}}
}

func (e *executors) client(address string) carillonv1connect.ExecutorServiceClient {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.clients[address]
	if !ok {
		var opts []connect.ClientOption
		if e.token != "" {
			opts = append(opts, connect.WithInterceptors(bearer(e.token)))
		}
		c = carillonv1connect.NewExecutorServiceClient(e.http, address, opts...)
		e.clients[address] = c
	}
	return c
}

// probeTimeout bounds one Beat or IdleBeat, so an executor that drops
// packets costs a FAILOVER or BUSYOVER fire seconds, not its whole deadline.
const probeTimeout = 3 * time.Second

// Beat implements route.Prober.
func (e *executors) Beat(ctx context.Context, address string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := e.client(address).Beat(ctx, &carillonv1.BeatRequest{})
	return err
}

// IdleBeat implements route.Prober.
func (e *executors) IdleBeat(ctx context.Context, address string, jobID int64) (bool, string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	res, err := e.client(address).IdleBeat(ctx, &carillonv1.IdleBeatRequest{JobId: jobID})
	if err != nil {
		return false, "", err
	}
	return res.Idle, res.Reason, nil
}

// bearer adds "Authorization: Bearer <token>" to every outgoing call.
func bearer(token string) connect.UnaryInterceptorFunc {
	value := "Bearer " + token
	return func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			req.Header().Set("Authorization", value)
			return next(ctx, req)
		}
	}
}

// ReadLog fetches a page of a run's log from the executor at address. The
// request names this admin's database, so that an executor that also ran
// runs of another database with the same ID returns this one's log.
func (t *Trigger) ReadLog(ctx context.Context, address string, runID int64, fromLine int32) (*carillonv1.ReadLogResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.DispatchTimeout)
	defer cancel()
	return t.executors.client(address).ReadLog(ctx, &carillonv1.ReadLogRequest{
		RunId: runID, FromLine: fromLine, DatabaseId: t.cfg.Store.DatabaseID(),
	})
}

// Kill asks the executor at address to kill run runID of job jobID, and
// only that run, whether it is running or queued there. The request also
// names the job: an executor that predates KillRequest.run_id ignores the
// run and kills every running and queued run of the job, as it always did.
func (t *Trigger) Kill(ctx context.Context, address string, jobID, runID int64) error {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.DispatchTimeout)
	defer cancel()
	_, err := t.executors.client(address).Kill(ctx, &carillonv1.KillRequest{
		JobId: jobID, RunId: runID, DatabaseId: t.cfg.Store.DatabaseID(),
	})
	return err
}

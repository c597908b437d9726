package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
	"github.com/carillonhq/carillon/sdk/internal/report"
)

// adminCallTimeout bounds each call to one admin.
const adminCallTimeout = 10 * time.Second

// admins calls the RegistryService of the first admin that answers, in the
// order of Config.AdminURLs; a run's result goes first to the admin that
// sent the run, once its id is known (RunRequest.admin_id).
type admins struct {
	urls    []string
	clients []carillonv1connect.RegistryServiceClient
	// instance is this process's instance id, which its results carry
	// (ReportResultsRequest.instance_id): the admin refuses a result for a
	// run sent to this address by another process.
	instance string

	// answered, when set, is called after every call an admin answered
	// (see reporter.adminAnswered). Set it before the first call.
	answered func()

	mu  sync.Mutex
	ids []string // each admin's id (RegisterResponse.admin_id), as learned; "" not yet
	// unknown says a run came from an admin whose id is not known yet:
	// the heartbeat loop, woken by unknownSeen, asks the admins (discover).
	unknown     atomic.Bool
	unknownSeen chan struct{}
	discovered  time.Time // the last discover's start; the heartbeat loop's own
}

func newAdmins(urls []string, client *http.Client, token, instance string) *admins {
	var opts []connect.ClientOption
	if token != "" {
		opts = append(opts, connect.WithInterceptors(sendBearer(token)))
	}
	a := &admins{urls: urls, instance: instance, ids: make([]string, len(urls)), unknownSeen: make(chan struct{}, 1)}
	for _, u := range urls {
		a.clients = append(a.clients, carillonv1connect.NewRegistryServiceClient(client, u, opts...))
	}
	return a
}

// call tries each admin in order until one succeeds: those of first, then
// the others in the order of urls. f learns the index of the admin it
// calls.
func (a *admins) call(ctx context.Context, first []int, f func(context.Context, int, carillonv1connect.RegistryServiceClient) error) error {
	var errs []error
	for _, i := range a.order(first) {
		cctx, cancel := context.WithTimeout(ctx, adminCallTimeout)
		err := f(cctx, i, a.clients[i])
		cancel()
		if err == nil {
			if a.answered != nil {
				a.answered()
			}
			return nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", a.urls[i], err))
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// order returns the indices of urls, those of first first.
func (a *admins) order(first []int) []int {
	out := slices.Clone(first)
	for i := range a.urls {
		if !slices.Contains(first, i) {
			out = append(out, i)
		}
	}
	return out
}

// learn notes that the admin at index i says its id is id.
func (a *admins) learn(i int, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.ids[i] = id
}

// index returns the index of the admin whose id is id, if known.
func (a *admins) index(id string) (int, bool) {
	if id == "" {
		return 0, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	i := slices.Index(a.ids, id)
	return i, i >= 0
}

// sentBy notes that a run came from the admin whose id is id: one not
// known yet wakes the heartbeat loop to ask the admins (discover).
func (a *admins) sentBy(id string) {
	if _, ok := a.index(id); id != "" && !ok {
		a.unknown.Store(true)
		select {
		case a.unknownSeen <- struct{}{}:
		default:
		}
	}
}

// discoverEvery is the least time between two discovers: an admin that
// does not answer is not asked for each run that comes from the unknown.
const discoverEvery = time.Second

// discover registers, at once, with each admin whose id is not known yet,
// to learn it, when a run came from one of them (sentBy): its result goes
// to the admin that sent it first, which settles the run with its
// dispatch record in one write. Admins that do not answer are asked again
// when the next such run comes, at most every discoverEvery.
func (a *admins) discover(ctx context.Context, app, address, instance string, clk clockReading) {
	if !a.unknown.Load() || time.Since(a.discovered) < discoverEvery {
		return // nothing to learn, or asked a moment ago: the next heartbeat asks again
	}
	a.unknown.Store(false)
	a.discovered = time.Now()
	req := registerRequest(app, address, instance, clk)
	var wg sync.WaitGroup
	for i, c := range a.clients {
		a.mu.Lock()
		known := a.ids[i] != ""
		a.mu.Unlock()
		if known {
			continue
		}
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, adminCallTimeout)
			defer cancel()
			if res, err := c.Register(cctx, req); err == nil {
				a.learn(i, res.GetAdminId())
			}
		})
	}
	wg.Wait()
}

// registerRequest is the heartbeat of the executor process instance of app
// at address, with the clock offset clk measured at the previous one.
func registerRequest(app, address, instance string, clk clockReading) *carillonv1.RegisterRequest {
	req := &carillonv1.RegisterRequest{AppName: app, Address: address, InstanceId: instance, Capabilities: capabilities}
	if clk.measured {
		req.ClockOffset, req.ClockRoundTrip = durationpb.New(clk.offset), durationpb.New(clk.roundTrip)
	}
	return req
}

// register announces the executor process instance of app at address,
// with what it can do (capabilities) and the clock offset measured at the
// previous heartbeat (clk), and returns the offset measured over this
// call's round trip (see clockReading).
func (a *admins) register(ctx context.Context, app, address, instance string, clk clockReading) (clockReading, error) {
	var next clockReading
	req := registerRequest(app, address, instance, clk)
	err := a.call(ctx, nil, func(ctx context.Context, i int, c carillonv1connect.RegistryServiceClient) error {
		sent := time.Now()
		res, err := c.Register(ctx, req)
		if err == nil {
			next = measureClock(sent, time.Now(), res.GetAdminTime())
			a.learn(i, res.GetAdminId())
		}
		return err
	})
	if err != nil {
		return clockReading{}, fmt.Errorf("register: %w", err)
	}
	return next, nil
}

func (a *admins) deregister(ctx context.Context, app, address string) error {
	err := a.call(ctx, nil, func(ctx context.Context, _ int, c carillonv1connect.RegistryServiceClient) error {
		_, err := c.Deregister(ctx, &carillonv1.DeregisterRequest{AppName: app, Address: address})
		return err
	})
	if err != nil {
		return fmt.Errorf("deregister: %w", err)
	}
	return nil
}

// reportResults sends batch to the admins, the results of each admin's
// runs to that admin first (Result.AdminID, where its id is known), else
// to the first that answers, and returns their refusals, one per result
// in batch order, or nil when they took every result (as admins that
// predate per-result outcomes always say).
func (a *admins) reportResults(ctx context.Context, batch []report.Result) ([]report.Refusal, error) {
	var refusals []report.Refusal
	for _, part := range a.byAdmin(batch) {
		got, err := a.reportTo(ctx, part.first, part.results)
		if err != nil {
			return nil, err
		}
		for j, f := range got {
			if f != (report.Refusal{}) {
				if refusals == nil {
					refusals = make([]report.Refusal, len(batch))
				}
				refusals[part.at[j]] = f
			}
		}
	}
	return refusals, nil
}

// adminPart is the results of a batch to send to one admin first.
type adminPart struct {
	first   []int           // the admin's index (the first admin's: the first that answers)
	results []report.Result // in batch order
	at      []int           // each result's index in the batch
}

// byAdmin splits batch by the admin each result goes to first.
func (a *admins) byAdmin(batch []report.Result) []adminPart {
	parts := map[int]*adminPart{} // by admin index
	var order []int
	for j, r := range batch {
		k := 0 // not known: the first that answers, in order
		if i, ok := a.index(r.AdminID); ok {
			k = i
		}
		p := parts[k]
		if p == nil {
			p = &adminPart{first: []int{k}}
			parts[k] = p
			order = append(order, k)
		}
		p.results, p.at = append(p.results, r), append(p.at, j)
	}
	out := make([]adminPart, len(order))
	for n, k := range order {
		out[n] = *parts[k]
	}
	return out
}

// reportTo sends results in one ReportResults call to the admins, those of
// first first, and returns their refusals (see reportResults).
func (a *admins) reportTo(ctx context.Context, first []int, results []report.Result) ([]report.Refusal, error) {
	req := &carillonv1.ReportResultsRequest{Results: make([]*carillonv1.RunResult, len(results)), InstanceId: a.instance}
	for i, r := range results {
		req.Results[i] = &carillonv1.RunResult{
			RunId:      r.RunID,
			DatabaseId: r.DatabaseID,
			Status:     r.Status,
			Message:    r.Message,
			FinishedAt: timestamppb.New(r.FinishedAt),
			Outputs:    r.Outputs,
		}
		if !r.StartedAt.IsZero() {
			req.Results[i].StartedAt = timestamppb.New(r.StartedAt)
		}
	}
	var refusals []report.Refusal
	err := a.call(ctx, first, func(ctx context.Context, i int, c carillonv1connect.RegistryServiceClient) error {
		res, err := c.ReportResults(ctx, req)
		if err != nil {
			return err
		}
		a.learn(i, res.GetAdminId())
		refusals, err = refusalsOf(results, res.GetOutcomes())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("report results: %w", err)
	}
	return refusals, nil
}

// refusalsOf returns the refusals among the outcomes of batch, one per
// result, or nil when there are none. Outcomes that do not match the batch
// one to one, in order, are an error: the admin's answer cannot be trusted.
func refusalsOf(batch []report.Result, outcomes []*carillonv1.ResultOutcome) ([]report.Refusal, error) {
	if len(outcomes) == 0 {
		return nil, nil // an admin that predates outcomes: all taken
	}
	if len(outcomes) != len(batch) {
		return nil, fmt.Errorf("%d outcomes for %d results", len(outcomes), len(batch))
	}
	var refusals []report.Refusal
	for i, o := range outcomes {
		if o.GetRunId() != batch[i].RunID {
			return nil, fmt.Errorf("outcome %d is of run %d, not of run %d", i, o.GetRunId(), batch[i].RunID)
		}
		if o.GetCode() == "" {
			continue
		}
		if refusals == nil {
			refusals = make([]report.Refusal, len(batch))
		}
		refusals[i] = report.Refusal{Code: o.GetCode(), Message: o.GetMessage()}
	}
	return refusals, nil
}

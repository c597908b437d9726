package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
// order of Config.AdminURLs.
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
}

func newAdmins(urls []string, client *http.Client, token, instance string) *admins {
	var opts []connect.ClientOption
	if token != "" {
		opts = append(opts, connect.WithInterceptors(sendBearer(token)))
	}
	a := &admins{urls: urls, instance: instance}
	for _, u := range urls {
		a.clients = append(a.clients, carillonv1connect.NewRegistryServiceClient(client, u, opts...))
	}
	return a
}

// call tries each admin in order until one succeeds.
func (a *admins) call(ctx context.Context, f func(context.Context, carillonv1connect.RegistryServiceClient) error) error {
	var errs []error
	for i, c := range a.clients {
		cctx, cancel := context.WithTimeout(ctx, adminCallTimeout)
		err := f(cctx, c)
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

// register announces the executor process instance of app at address,
// with what it can do (capabilities) and the clock offset measured at the
// previous heartbeat (clk), and returns the offset measured over this
// call's round trip (see clockReading).
func (a *admins) register(ctx context.Context, app, address, instance string, clk clockReading) (clockReading, error) {
	var next clockReading
	req := &carillonv1.RegisterRequest{AppName: app, Address: address, InstanceId: instance, Capabilities: capabilities}
	if clk.measured {
		req.ClockOffset, req.ClockRoundTrip = durationpb.New(clk.offset), durationpb.New(clk.roundTrip)
	}
	err := a.call(ctx, func(ctx context.Context, c carillonv1connect.RegistryServiceClient) error {
		sent := time.Now()
		res, err := c.Register(ctx, req)
		if err == nil {
			next = measureClock(sent, time.Now(), res.GetAdminTime())
		}
		return err
	})
	if err != nil {
		return clockReading{}, fmt.Errorf("register: %w", err)
	}
	return next, nil
}

func (a *admins) deregister(ctx context.Context, app, address string) error {
	err := a.call(ctx, func(ctx context.Context, c carillonv1connect.RegistryServiceClient) error {
		_, err := c.Deregister(ctx, &carillonv1.DeregisterRequest{AppName: app, Address: address})
		return err
	})
	if err != nil {
		return fmt.Errorf("deregister: %w", err)
	}
	return nil
}

// reportResults sends batch to the first admin that answers, and returns
// its refusals, one per result in batch order, or nil when it took every
// result (as admins that predate per-result outcomes always say).
func (a *admins) reportResults(ctx context.Context, batch []report.Result) ([]report.Refusal, error) {
	req := &carillonv1.ReportResultsRequest{Results: make([]*carillonv1.RunResult, len(batch)), InstanceId: a.instance}
	for i, r := range batch {
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
	err := a.call(ctx, func(ctx context.Context, c carillonv1connect.RegistryServiceClient) error {
		res, err := c.ReportResults(ctx, req)
		if err != nil {
			return err
		}
		refusals, err = refusalsOf(batch, res.GetOutcomes())
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

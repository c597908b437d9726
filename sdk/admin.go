package sdk

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// adminCallTimeout bounds each call to one admin.
const adminCallTimeout = 10 * time.Second

// admins calls the RegistryService of the first admin that answers, in the
// order of Config.AdminURLs.
type admins struct {
	urls    []string
	clients []carillonv1connect.RegistryServiceClient

	// answered, when set, is called after every call an admin answered
	// (see reporter.adminAnswered). Set it before the first call.
	answered func()
}

func newAdmins(urls []string, client *http.Client, token string) *admins {
	var opts []connect.ClientOption
	if token != "" {
		opts = append(opts, connect.WithInterceptors(sendBearer(token)))
	}
	a := &admins{urls: urls}
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

// register announces the executor process instance of app at address.
func (a *admins) register(ctx context.Context, app, address, instance string) error {
	err := a.call(ctx, func(ctx context.Context, c carillonv1connect.RegistryServiceClient) error {
		_, err := c.Register(ctx, &carillonv1.RegisterRequest{AppName: app, Address: address, InstanceId: instance})
		return err
	})
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	return nil
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

func (a *admins) reportResults(ctx context.Context, batch []result) error {
	req := &carillonv1.ReportResultsRequest{Results: make([]*carillonv1.RunResult, len(batch))}
	for i, r := range batch {
		req.Results[i] = &carillonv1.RunResult{
			RunId:      r.RunID,
			DatabaseId: r.DatabaseID,
			Status:     r.Status,
			Message:    r.Message,
			FinishedAt: timestamppb.New(r.FinishedAt),
		}
	}
	err := a.call(ctx, func(ctx context.Context, c carillonv1connect.RegistryServiceClient) error {
		_, err := c.ReportResults(ctx, req)
		return err
	})
	if err != nil {
		return fmt.Errorf("report results: %w", err)
	}
	return nil
}

package server

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"connectrpc.com/connect"

	carillonv1 "github.com/carillonhq/carillon/proto/carillon/v1"
	"github.com/carillonhq/carillon/proto/carillon/v1/carillonv1connect"
)

// TestReadLimiter checks the bounds on API reads with a handler that
// holds each read until released: one read runs, one waits, a third is
// refused at once with resource_exhausted; a waiting read whose deadline
// passes fails with deadline_exceeded; writes are not limited. It runs in a
// synctest bubble: synctest.Wait says when the second read waits.
func TestReadLimiter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testReadLimiter)
}

func testReadLimiter(t *testing.T) {
	l := newReadLimiter(time.Hour, 1, 1)
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	handler := l.WrapUnary(func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if !strings.HasSuffix(req.Spec().Procedure, "/GetRun") {
			return connect.NewResponse(&carillonv1.GetRunResponse{}), nil // a write: answers at once
		}
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return connect.NewResponse(&carillonv1.GetRunResponse{}), nil
	})
	call := func(ctx context.Context, procedure string) error {
		req := connect.NewRequest(&carillonv1.GetRunRequest{})
		_, err := handler(ctx, requestWithProcedure{req, procedure})
		return err
	}
	read := "/" + carillonv1connect.RunServiceName + "/GetRun"
	ctx := context.Background()

	first := make(chan error, 1)
	go func() { first <- call(ctx, read) }()
	<-started // running
	waitCtx, cancelWait := context.WithCancel(ctx)
	second := make(chan error, 1)
	go func() { second <- call(waitCtx, read) }()
	synctest.Wait() // the second read waits for the slot
	if len(l.queued) != 2 {
		t.Fatalf("%d reads running or waiting, want 2", len(l.queued))
	}
	if err := call(ctx, read); connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(err.Error(), "retry later") {
		t.Fatalf("a read past the limits: %v, want resource_exhausted", err)
	}
	select {
	case <-started:
		t.Fatal("a second read ran while the first held the one slot")
	default:
	}
	// A write is not limited.
	if err := call(ctx, "/"+carillonv1connect.JobServiceName+"/CreateJob"); err != nil {
		t.Fatalf("a write while reads are at their limit: %v", err)
	}
	cancelWait() // the waiting read gives up
	if err := <-second; connect.CodeOf(err) != connect.CodeCanceled {
		t.Errorf("a waiting read canceled: %v, want canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the first read: %v", err)
	}

	// A read waiting for a slot past its deadline.
	l = newReadLimiter(20*time.Millisecond, 1, 1)
	l.running <- struct{}{} // the slot is taken
	handler = l.WrapUnary(func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) { return nil, nil })
	if err := call(ctx, read); connect.CodeOf(err) != connect.CodeDeadlineExceeded || !strings.Contains(err.Error(), "waiting for its turn") {
		t.Errorf("a read waiting past its deadline: %v, want deadline_exceeded", err)
	}
}

// requestWithProcedure is a request whose Spec names procedure.
type requestWithProcedure struct {
	connect.AnyRequest
	procedure string
}

func (r requestWithProcedure) Spec() connect.Spec {
	spec := r.AnyRequest.Spec()
	spec.Procedure = r.procedure
	return spec
}
